def min_and_max(xs):
    """Return `[smallest, largest]` of the numbers in the non-empty list `xs` (both the same
    number for a one-item list).
    """
    raise NotImplementedError
