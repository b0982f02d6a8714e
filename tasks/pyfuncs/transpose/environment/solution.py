def transpose(matrix):
    """`matrix` is a list of rows of equal length. Return its transpose (rows become columns)
    as a list of lists. The transpose of [] is [].
    """
    raise NotImplementedError
