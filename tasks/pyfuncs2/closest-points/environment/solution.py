def closest_points(points, k):
    """`points` is a list of `[x, y]` integer pairs. Return the `k` points closest to `[0,
    0]` (straight-line distance), nearest first; points at equal distance are ordered by
    `x`, then by `y`. All points when there are fewer than `k`.
    """
    raise NotImplementedError
