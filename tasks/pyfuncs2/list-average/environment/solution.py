def list_average(xs):
    """Return the average of the numbers in the list `xs` as a float, or `0.0` when the list
    is empty.
    """
    raise NotImplementedError
