def count_words_starting(s, letter):
    """Return how many whitespace-separated words of the string `s` start with the letter
    `letter`, ignoring case.
    """
    raise NotImplementedError
