def bit_length(n):
    """Return how many binary digits the positive integer `n` has, without leading zeros
    (`5` is `101`, so 3).
    """
    raise NotImplementedError
