def digital_root(n):
    """Repeatedly replace the non-negative integer `n` by the sum of its digits until one
    digit is left; return that digit.
    """
    raise NotImplementedError
