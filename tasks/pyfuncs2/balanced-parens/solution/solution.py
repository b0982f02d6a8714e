def balanced_parens(s):
    depth = 0
    for c in s:
        if c == "(":
            depth += 1
        else:
            depth -= 1
        if depth < 0:
            return False
    return depth == 0
