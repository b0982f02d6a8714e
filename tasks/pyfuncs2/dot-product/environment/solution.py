def dot_product(a, b):
    """Return the dot product of the equal-length number lists `a` and `b` (the sum of `a[i]
    * b[i]`; 0 for empty lists).
    """
    raise NotImplementedError
