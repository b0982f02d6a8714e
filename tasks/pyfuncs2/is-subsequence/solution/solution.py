def is_subsequence(small, big):
    it = iter(big)
    return all(c in it for c in small)
