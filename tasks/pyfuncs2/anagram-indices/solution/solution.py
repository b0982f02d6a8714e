def anagram_indices(s, p):
    need = sorted(p)
    return [i for i in range(len(s) - len(p) + 1) if sorted(s[i:i + len(p)]) == need]
