def longest_rising_path(grid):
    """`grid` is a non-empty list of equal-length rows of numbers. A path steps between
    cells that share a side, and every step must go to a strictly larger number. Return the
    number of cells on the longest such path (at least 1).
    """
    raise NotImplementedError
