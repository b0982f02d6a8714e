def round_significant(x, digits):
    """Return the number `x` rounded to `digits` significant figures (`digits >= 1`) as a
    float, using `round(x, digits - 1 - e)` where `e` is the exponent of the leading digit
    (`floor(log10(abs(x)))`); zero stays 0.0. So 123456 to 2 figures is 120000.0 and
    0.0012345 to 3 is 0.00123.
    """
    raise NotImplementedError
