def minutes_to_spread(grid):
    """`grid` is a list of equal-length rows of 0 (empty), 1 (clean) and 2 (infected). Every
    minute, each clean cell that shares a side with an infected cell becomes infected.
    Return the number of minutes until no clean cell is left, 0 when none is clean at the
    start, or -1 when some clean cell can never be reached.
    """
    raise NotImplementedError
