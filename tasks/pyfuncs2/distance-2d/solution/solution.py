import math


def distance_2d(p, q):
    return math.hypot(q[0] - p[0], q[1] - p[1])
