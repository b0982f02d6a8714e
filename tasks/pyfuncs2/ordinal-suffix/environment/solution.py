def ordinal_suffix(n):
    """Return the positive integer `n` as text followed by its English ordinal suffix:
    `'st'` when it ends in 1, `'nd'` in 2, `'rd'` in 3, otherwise `'th'` - except that
    numbers ending in 11, 12 or 13 always take `'th'` (`'11th'`, `'112th'`).
    """
    raise NotImplementedError
