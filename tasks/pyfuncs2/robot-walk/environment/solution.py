def robot_walk(grid, start, moves):
    """A robot starts at `[row, column]` = `start` on `grid`, a list of equal-length strings
    of `'.'` (open) and `'#'` (wall). For each letter of `moves` (`U`, `D`, `L`, `R`: up,
    down, left, right) it steps one cell that way, unless the step would leave the grid or
    enter a wall, in which case it stays. Return its final `[row, column]`.
    """
    raise NotImplementedError
