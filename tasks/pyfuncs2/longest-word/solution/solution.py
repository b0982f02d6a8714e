def longest_word(s):
    best = ""
    for word in s.split():
        if len(word) > len(best):
            best = word
    return best
