def divisors(n):
    """Return the sorted list of the positive divisors of the positive integer `n`,
    including 1 and `n`.
    """
    raise NotImplementedError
