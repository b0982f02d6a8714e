def same_sign(a, b):
    """Return True if the numbers `a` and `b` are both strictly positive or both strictly
    negative; if either is zero, return False.
    """
    raise NotImplementedError
