def is_zigzag(xs):
    diffs = [b - a for a, b in zip(xs, xs[1:])]
    if any(d == 0 for d in diffs):
        return False
    return all((diffs[i] > 0) != (diffs[i + 1] > 0) for i in range(len(diffs) - 1))
