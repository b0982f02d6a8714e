def distinct_subsequences(s, t):
    """Return in how many ways the string `t` can be formed by deleting characters from the
    string `s` without reordering, counting different sets of kept positions as different
    ways (`s = 'rabbbit'`, `t = 'rabbit'` gives 3). An empty `t` can be formed in 1 way; a
    `t` longer than `s` in 0.
    """
    raise NotImplementedError
