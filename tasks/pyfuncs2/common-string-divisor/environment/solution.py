def common_string_divisor(a, b):
    """A string `d` divides a string `s` when `s` is `d` repeated one or more times. Return
    the longest string that divides both `a` and `b` (`'ABCABC'` and `'ABC'` give `'ABC'`;
    `'ABABAB'` and `'ABAB'` give `'AB'`), or `''` if there is none.
    """
    raise NotImplementedError
