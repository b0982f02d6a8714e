def closest_value(xs, target):
    best = xs[0]
    for x in xs:
        if abs(x - target) < abs(best - target) or (abs(x - target) == abs(best - target) and x < best):
            best = x
    return best
