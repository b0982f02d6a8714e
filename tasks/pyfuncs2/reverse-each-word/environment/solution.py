def reverse_each_word(s):
    """Return the string `s` with the letters of every word reversed in place while the
    words keep their order. Words are separated by single spaces, and every space stays
    where it is (so leading, trailing and double spaces are kept).
    """
    raise NotImplementedError
