def thousands_separator(n):
    """Return the integer `n` written with a comma between every group of three digits, like
    `'-1,234,567'`.
    """
    raise NotImplementedError
