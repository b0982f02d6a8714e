def swap_halves(s):
    h = len(s) // 2
    return s[h:] + s[:h]
