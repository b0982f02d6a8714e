def is_fibonacci_number(n):
    """Return `True` if the non-negative integer `n` is in the Fibonacci sequence 0, 1, 1,
    2, 3, 5, 8, ...
    """
    raise NotImplementedError
