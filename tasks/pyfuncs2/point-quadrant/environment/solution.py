def point_quadrant(x, y):
    """Return the quadrant of the point (`x`, `y`): 1 when both are positive, 2 when `x` is
    negative and `y` positive, 3 when both are negative, 4 when `x` is positive and `y`
    negative; 0 when the point lies on an axis (`x` or `y` is zero).
    """
    raise NotImplementedError
