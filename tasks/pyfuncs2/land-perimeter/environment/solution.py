def land_perimeter(grid):
    """`grid` is a list of rows of 1 (land) and 0 (water). Each cell is a unit square.
    Return the total length of the border between land and anything else: a side of a land
    cell counts when the cell beyond it is water or outside the grid.
    """
    raise NotImplementedError
