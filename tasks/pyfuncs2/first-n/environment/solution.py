def first_n(xs, n):
    """Return a list of the first `n` items of the list `xs` (all of them if `xs` has fewer
    than `n`).
    """
    raise NotImplementedError
