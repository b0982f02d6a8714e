def alternating_sum(n):
    """Return `1 - 2 + 3 - 4 + ...` up to `n` for the non-negative integer `n`: odd numbers
    are added and even numbers subtracted (0 for `n` = 0).
    """
    raise NotImplementedError
