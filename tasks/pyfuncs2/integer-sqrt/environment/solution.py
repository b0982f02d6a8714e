def integer_sqrt(n):
    """Return the largest integer `r` with `r * r <= n` for the non-negative integer `n`,
    without floating-point arithmetic or `math.isqrt` (`n` may be huge).
    """
    raise NotImplementedError
