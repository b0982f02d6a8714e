def triangular_number(n):
    """Return `True` if the non-negative integer `n` equals `1 + 2 + ... + k` for some `k`
    >= 0 (so 0, 1, 3, 6, 10, ...).
    """
    raise NotImplementedError
