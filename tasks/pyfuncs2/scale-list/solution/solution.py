def scale_list(xs):
    top = max(xs, default=0)
    if top == 0:
        return [0.0] * len(xs)
    return [x / top for x in xs]
