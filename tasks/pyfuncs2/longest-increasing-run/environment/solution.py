def longest_increasing_run(xs):
    """Return the length of the longest stretch of neighbouring items of `xs` in which every
    item is strictly greater than the one before (0 for an empty list, 1 if nothing
    increases).
    """
    raise NotImplementedError
