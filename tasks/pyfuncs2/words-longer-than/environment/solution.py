def words_longer_than(s, n):
    """Return the list of words of the string `s` (split on whitespace) that have more than
    `n` characters, in order.
    """
    raise NotImplementedError
