from collections import Counter


def added_letter(s, t):
    return next(iter(Counter(t) - Counter(s)))
