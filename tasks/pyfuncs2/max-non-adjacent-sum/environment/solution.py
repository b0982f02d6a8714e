def max_non_adjacent_sum(xs):
    """Choose some items of the number list `xs` such that no two chosen items are
    neighbours. Return the largest possible sum of the chosen items; choosing nothing is
    allowed, so the answer is never below 0.
    """
    raise NotImplementedError
