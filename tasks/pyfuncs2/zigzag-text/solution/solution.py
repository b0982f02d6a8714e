def zigzag_text(s, rows):
    if rows == 1:
        return s
    lines = [""] * rows
    row, step = 0, 1
    for c in s:
        lines[row] += c
        if row == 0:
            step = 1
        elif row == rows - 1:
            step = -1
        row += step
    return "".join(lines)
