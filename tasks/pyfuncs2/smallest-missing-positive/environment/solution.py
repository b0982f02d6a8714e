def smallest_missing_positive(xs):
    """Return the smallest positive integer (1, 2, 3, ...) that does not occur in the
    integer list `xs`.
    """
    raise NotImplementedError
