def is_permutation(xs):
    return sorted(xs) == list(range(1, len(xs) + 1))
