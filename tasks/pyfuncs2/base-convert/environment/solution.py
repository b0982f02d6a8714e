def base_convert(n, b):
    """Return the non-negative integer `n` written in base `b` (2 to 16) with digits `0-9`
    then lower-case `a-f`; `0` gives `'0'`.
    """
    raise NotImplementedError
