def is_repeated_pattern(s):
    return len(s) > 1 and s in (s + s)[1:-1]
