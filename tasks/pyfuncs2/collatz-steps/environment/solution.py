def collatz_steps(n):
    """Starting from the positive integer `n`, repeatedly replace `n` by `n // 2` when it is
    even or by `3 * n + 1` when it is odd, until it becomes 1. Return how many replacements
    that takes (0 for `n` = 1).
    """
    raise NotImplementedError
