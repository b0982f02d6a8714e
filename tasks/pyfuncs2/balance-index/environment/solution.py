def balance_index(xs):
    """Return the smallest index `i` of the list `xs` where the sum of the numbers before it
    equals the sum of the numbers after it (`xs[i]` itself belongs to neither side; an empty
    side sums to 0), or `-1` when there is no such index.
    """
    raise NotImplementedError
