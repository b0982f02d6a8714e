def longest_increasing_subsequence(xs):
    """Return the length of the longest strictly increasing subsequence of `xs` (items in
    order, not necessarily neighbouring).
    """
    raise NotImplementedError
