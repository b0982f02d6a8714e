def knapsack_value(items, capacity):
    """`items` is a list of `[weight, value]` pairs (positive integers), each usable at most
    once. Return the largest total value with total weight at most `capacity`.
    """
    raise NotImplementedError
