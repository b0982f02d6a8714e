def is_harshad(n):
    """Return `True` if the positive integer `n` is divisible by the sum of its own digits.
    """
    raise NotImplementedError
