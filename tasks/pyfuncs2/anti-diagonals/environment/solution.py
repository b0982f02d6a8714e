def anti_diagonals(m):
    """Group the cells of the matrix `m` (a list of rows of equal length) by `row + column`.
    Return the list of groups for `row + column` = 0, 1, 2, ..., each group listing its
    items from the top row down; an empty matrix gives an empty list.
    """
    raise NotImplementedError
