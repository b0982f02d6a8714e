def primes_up_to(n):
    """Return the list of all prime numbers less than or equal to `n` (an empty list for `n`
    < 2).
    """
    raise NotImplementedError
