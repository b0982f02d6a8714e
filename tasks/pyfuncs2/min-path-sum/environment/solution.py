def min_path_sum(grid):
    """`grid` is a non-empty list of rows of non-negative numbers. Return the smallest sum
    of a path from the top-left to the bottom-right cell moving only right or down.
    """
    raise NotImplementedError
