def factorial_zeros(n):
    """Return how many zeros `n!` (the factorial of the non-negative integer `n`) ends with,
    without computing `n!` for large `n`.
    """
    raise NotImplementedError
