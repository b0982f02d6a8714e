def factorial(n):
    """Return `n!`, the product `1 * 2 * ... * n`, for the non-negative integer `n`; `0!` is
    1.
    """
    raise NotImplementedError
