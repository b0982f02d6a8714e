def thousands_separator(n):
    digits = str(abs(n))
    groups = []
    while digits:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    return ("-" if n < 0 else "") + ",".join(groups)
