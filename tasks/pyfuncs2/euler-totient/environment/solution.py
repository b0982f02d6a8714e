def euler_totient(n):
    """Return Euler's totient of the positive integer `n`: how many integers `k` with `1 <=
    k <= n` share no divisor greater than 1 with `n` (so the totient of 1 is 1, of a prime p
    is p - 1, of 9 is 6).
    """
    raise NotImplementedError
