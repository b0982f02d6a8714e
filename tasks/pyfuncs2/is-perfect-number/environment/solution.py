def is_perfect_number(n):
    """Return `True` if the positive integer `n` equals the sum of its divisors smaller than
    itself (6 = 1 + 2 + 3). 1 is not perfect.
    """
    raise NotImplementedError
