def words_longer_than(s, n):
    return [w for w in s.split() if len(w) > n]
