def is_magic_square(m):
    """`m` is an n-by-n matrix of integers with `n >= 1`. Return `True` if every row, every
    column and both main diagonals add up to the same sum (the numbers need not be distinct
    or consecutive).
    """
    raise NotImplementedError
