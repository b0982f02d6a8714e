def translate_words(words, table):
    """Return a list where each string of the list `words` is replaced by its value in the
    dict `table`, or kept as it is when `table` has no such key.
    """
    raise NotImplementedError
