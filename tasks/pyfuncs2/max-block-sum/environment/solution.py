def max_block_sum(m):
    """`m` is a non-empty matrix (a list of non-empty rows of equal length) of integers.
    Return the largest sum of a non-empty rectangular block of neighbouring cells (all rows
    from one to another, all columns from one to another); with only negative numbers that
    is the largest single cell.
    """
    raise NotImplementedError
