def largest_square_of_ones(grid):
    """`grid` is a list of equal-length rows of 0 and 1. Return the side length of the
    largest square block of neighbouring cells that are all 1 (0 when the grid has no 1 or
    no cells).
    """
    raise NotImplementedError
