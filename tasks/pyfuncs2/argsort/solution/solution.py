def argsort(xs):
    return sorted(range(len(xs)), key=lambda i: xs[i])
