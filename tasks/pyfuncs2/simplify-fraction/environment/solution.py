def simplify_fraction(num, den):
    """Return the fraction `num / den` (integers, `den != 0`) in lowest terms as a string
    `'a/b'` with a positive denominator; the sign goes on the numerator (`(3, -6)` gives
    `'-1/2'`). If the denominator becomes 1, return just the numerator (`'4'`); a zero
    numerator gives `'0'`.
    """
    raise NotImplementedError
