def top_k(xs, k):
    """Return the `k` largest numbers of the list `xs`, from largest to smallest (all of
    them if `xs` has fewer than `k`; repeated values count separately).
    """
    raise NotImplementedError
