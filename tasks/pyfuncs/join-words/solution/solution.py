def join_words(a, b):
    return a + ' ' + b
