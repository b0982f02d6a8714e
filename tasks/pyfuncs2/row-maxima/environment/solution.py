def row_maxima(m):
    """`m` is a matrix given as a list of non-empty rows. Return the list of the largest
    number of each row, from the top row down (empty when `m` has no rows).
    """
    raise NotImplementedError
