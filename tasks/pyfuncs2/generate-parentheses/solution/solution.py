def generate_parentheses(n):
    out = []

    def grow(prefix, opened, closed):
        if len(prefix) == 2 * n:
            out.append(prefix)
            return
        if opened < n:
            grow(prefix + "(", opened + 1, closed)
        if closed < opened:
            grow(prefix + ")", opened, closed + 1)

    grow("", 0, 0)
    return sorted(out)
