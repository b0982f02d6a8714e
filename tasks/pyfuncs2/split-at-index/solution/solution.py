def split_at_index(s, i):
    return [s[:i], s[i:]]
