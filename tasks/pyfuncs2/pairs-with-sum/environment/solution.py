def pairs_with_sum(xs, target):
    """Return how many pairs of positions `i < j` in the list `xs` have `xs[i] + xs[j] ==
    target`.
    """
    raise NotImplementedError
