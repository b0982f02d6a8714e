def prime_factors(n):
    """Return the prime factors of the integer `n >= 2` in increasing order, each repeated as
    often as it divides `n` (so 12 gives [2, 2, 3]).
    """
    raise NotImplementedError
