def is_weekend(day):
    """Return True if the English day name `day` is Saturday or Sunday, ignoring upper/lower
    case (`'SUNDAY'` counts) and surrounding spaces; return False for any other string,
    including other days and abbreviations such as `'Sat'`.
    """
    raise NotImplementedError
