def decade_label(year):
    """Return the label of the decade that the year `year` (a non-negative integer) falls
    in: the year with its last digit replaced by `0`, then `'s'`, such as `'1980s'` for
    1987. Years ending in 0 open their decade (1990 gives `'1990s'`), and single-digit years
    give `'0s'`.
    """
    raise NotImplementedError
