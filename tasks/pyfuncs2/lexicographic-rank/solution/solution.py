from math import factorial


def lexicographic_rank(s):
    rank = 1
    for i, c in enumerate(s):
        smaller = sum(1 for d in s[i + 1 :] if d < c)
        rank += smaller * factorial(len(s) - i - 1)
    return rank
