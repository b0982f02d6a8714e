def reverse_words(s):
    """Return the words of the string `s` in reverse order, joined by single spaces (extra
    whitespace is dropped).
    """
    raise NotImplementedError
