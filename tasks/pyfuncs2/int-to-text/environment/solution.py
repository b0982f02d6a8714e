def int_to_text(n):
    """Return the decimal text of the integer `n`, for example `-12` becomes `'-12'`.
    """
    raise NotImplementedError
