def pascal_row(n):
    """Return row `n` (0-based) of Pascal's triangle as a list: row 0 is [1], row 1 is [1, 1],
    row 2 is [1, 2, 1].
    """
    raise NotImplementedError
