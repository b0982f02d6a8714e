def product_of_others(xs):
    out = []
    for i in range(len(xs)):
        p = 1
        for j, x in enumerate(xs):
            if j != i:
                p *= x
        out.append(p)
    return out
