def top_k(nums, k):
    """Return the `k` most frequent numbers of `nums`, most frequent first; numbers with the
    same count come smaller number first. If there are fewer than `k` distinct numbers,
    return all of them.
    """
    raise NotImplementedError
