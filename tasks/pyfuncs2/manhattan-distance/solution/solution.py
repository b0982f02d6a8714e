def manhattan_distance(p, q):
    return abs(p[0] - q[0]) + abs(p[1] - q[1])
