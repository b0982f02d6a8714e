def parens_to_add(s):
    open_count = needed = 0
    for c in s:
        if c == "(":
            open_count += 1
        elif open_count:
            open_count -= 1
        else:
            needed += 1
    return needed + open_count
