def game_of_life_step(grid):
    """`grid` is a list of rows of 0 (dead) and 1 (alive). Return the next generation of
    Conway's Game of Life: a live cell with 2 or 3 live neighbours (of 8; cells outside the
    grid are dead) lives, a dead cell with exactly 3 becomes alive, every other cell is
    dead.
    """
    raise NotImplementedError
