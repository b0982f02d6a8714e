def largest_gap(xs):
    """Sort the numbers of `xs` and return the largest difference between two neighbouring
    numbers of the sorted list, or `0` when `xs` has fewer than two numbers.
    """
    raise NotImplementedError
