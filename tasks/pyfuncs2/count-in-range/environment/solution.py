def count_in_range(xs, lo, hi):
    """Return how many numbers of the list `xs` satisfy `lo <= x <= hi` (both bounds
    included; 0 when `lo > hi`).
    """
    raise NotImplementedError
