def word_lengths(words):
    return [len(w) for w in words]
