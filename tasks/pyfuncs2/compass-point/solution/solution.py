import math


def compass_point(degrees):
    points = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
    return points[math.floor((degrees % 360 + 22.5) / 45) % 8]
