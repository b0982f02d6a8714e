def split_on_value(xs, sep):
    pieces = [[]]
    for x in xs:
        if x == sep:
            pieces.append([])
        else:
            pieces[-1].append(x)
    return pieces
