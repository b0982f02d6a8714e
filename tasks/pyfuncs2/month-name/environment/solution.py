def month_name(m):
    """Return the English name of the month number `m` (1-12) with a capital first letter: 1
    is `'January'`, 12 is `'December'`.
    """
    raise NotImplementedError
