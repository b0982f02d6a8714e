def is_prime(n):
    """Return `True` if the integer `n` is a prime number, else `False`. Numbers below 2
    (including negatives) are not prime.
    """
    raise NotImplementedError
