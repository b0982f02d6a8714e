def factorial(n):
    """Return n! (the product 1 * 2 * ... * n) for an integer `n >= 0`; 0! is 1.
    """
    raise NotImplementedError
