def polygon_area(points):
    n = len(points)
    if n < 3:
        return 0.0
    twice = sum(points[i][0] * points[(i + 1) % n][1] - points[(i + 1) % n][0] * points[i][1] for i in range(n))
    return abs(twice) / 2
