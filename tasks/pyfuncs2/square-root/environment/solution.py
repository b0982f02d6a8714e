def square_root(x):
    """Return the square root of the non-negative number `x` as a float.
    """
    raise NotImplementedError
