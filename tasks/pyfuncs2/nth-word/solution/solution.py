def nth_word(s, n):
    words = s.split()
    if 1 <= n <= len(words):
        return words[n - 1]
    return ""
