def sum_squares_list(xs):
    """Return the sum of the squares of the numbers in the list `xs` (0 for an empty list).
    """
    raise NotImplementedError
