def to_negabinary(n):
    if n == 0:
        return "0"
    digits = []
    while n != 0:
        n, r = divmod(n, -2)
        if r < 0:
            n, r = n + 1, r + 2
        digits.append(str(r))
    return "".join(reversed(digits))
