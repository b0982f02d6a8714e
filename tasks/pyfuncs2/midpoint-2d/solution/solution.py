def midpoint_2d(x1, y1, x2, y2):
    return [(x1 + x2) / 2, (y1 + y2) / 2]
