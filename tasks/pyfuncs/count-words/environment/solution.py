def count_words(text):
    """Return the number of words in `text`, where words are separated by any amount of
    whitespace (spaces, tabs, newlines).
    """
    raise NotImplementedError
