def second_largest(xs):
    """Return the second largest distinct value of the number list `xs` (repeats of the
    largest do not count), or `None` when `xs` has fewer than two distinct values.
    """
    raise NotImplementedError
