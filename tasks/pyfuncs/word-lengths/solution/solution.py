def word_lengths(text):
    return {w: len(w) for w in text.split()}
