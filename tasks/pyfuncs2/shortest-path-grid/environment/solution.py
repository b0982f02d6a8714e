def shortest_path_grid(grid):
    """`grid` is a list of strings of `.` (open) and `#` (wall). Return the fewest steps
    (up, down, left, right) from the top-left to the bottom-right cell, or -1 if it cannot
    be reached or either end is a wall (0 for a 1x1 open grid).
    """
    raise NotImplementedError
