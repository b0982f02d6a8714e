def count_islands(grid):
    """`grid` is a list of rows of 0s and 1s. An island is a group of 1s connected horizontally
    or vertically (not diagonally). Return the number of islands.
    """
    raise NotImplementedError
