def expand_ranges(s):
    out = []
    for piece in s.split(","):
        piece = piece.strip()
        if not piece:
            continue
        if "-" in piece[1:]:
            cut = piece.index("-", 1)
            out.extend(range(int(piece[:cut]), int(piece[cut + 1:]) + 1))
        else:
            out.append(int(piece))
    return out
