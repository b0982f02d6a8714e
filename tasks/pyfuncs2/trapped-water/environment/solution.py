def trapped_water(heights):
    """`heights` gives the heights of walls of width 1 standing side by side. After rain,
    water stays above a position up to the lower of the highest wall to its left and the
    highest wall to its right (the position's own wall included). Return the total units of
    water held (0 for fewer than three walls).
    """
    raise NotImplementedError
