def add_fractions(a, b, c, d):
    """Return the sum of the fractions `a/b` and `c/d` (integers, `b` and `d` non-zero) in
    lowest terms as a list `[numerator, denominator]` with a positive denominator; a zero
    sum is `[0, 1]`.
    """
    raise NotImplementedError
