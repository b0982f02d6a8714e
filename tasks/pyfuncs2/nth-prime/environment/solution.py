def nth_prime(n):
    """Return the `n`-th prime number, counting from 1 (`nth_prime(1) == 2`).
    """
    raise NotImplementedError
