def kth_smallest(xs, k):
    """Return the `k`-th smallest distinct value of the list `xs` (`k` = 1 is the minimum),
    or `None` when there are fewer than `k` distinct values.
    """
    raise NotImplementedError
