def is_arithmetic(xs):
    if len(xs) < 3:
        return True
    step = xs[1] - xs[0]
    for i in range(2, len(xs)):
        if xs[i] - xs[i - 1] != step:
            return False
    return True
