def ascii_sum(s):
    return sum(ord(c) for c in s)
