def is_prime(n):
    """Return `True` if the integer `n` is prime: greater than 1 and divisible only by 1 and
    itself. 0, 1 and negative numbers are not prime.
    """
    raise NotImplementedError
