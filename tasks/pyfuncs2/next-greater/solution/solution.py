def next_greater(xs):
    out = [None] * len(xs)
    stack = []
    for i, x in enumerate(xs):
        while stack and xs[stack[-1]] < x:
            out[stack.pop()] = x
        stack.append(i)
    return out
