def list_halves(xs):
    half = len(xs) // 2
    return [xs[:half], xs[half:]]
