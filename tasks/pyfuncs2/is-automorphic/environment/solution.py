def is_automorphic(n):
    """Return True if the non-negative integer `n` is automorphic: the decimal digits of `n
    * n` end with the digits of `n` (5 * 5 = 25 and 76 * 76 = 5776 are; 7 * 7 = 49 is not).
    0 and 1 are automorphic.
    """
    raise NotImplementedError
