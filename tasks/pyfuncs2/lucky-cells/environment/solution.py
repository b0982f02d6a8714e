def lucky_cells(m):
    """`m` is a non-empty matrix of distinct numbers (a list of non-empty rows of equal
    length). Return the sorted list of the numbers that are the smallest of their row and at
    the same time the largest of their column.
    """
    raise NotImplementedError
