def mine_counts(grid):
    """`grid` is a list of equal-length strings of `'*'` (a mine) and `'.'` (empty). Return
    the grid as a list of strings where each `'.'` is replaced by the digit counting the
    mines among its up to eight neighbours (sides and corners); mines stay `'*'`.
    """
    raise NotImplementedError
