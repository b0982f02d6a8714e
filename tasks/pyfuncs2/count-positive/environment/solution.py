def count_positive(xs):
    """Return how many numbers in the list `xs` are strictly greater than zero.
    """
    raise NotImplementedError
