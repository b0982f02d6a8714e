def position_of_max(m):
    """Return `[row, column]` (from 0) of the largest number in the non-empty matrix `m` (a
    list of non-empty rows); when it occurs more than once, the first one reading rows top
    to bottom and each row left to right.
    """
    raise NotImplementedError
