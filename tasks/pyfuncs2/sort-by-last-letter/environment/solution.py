def sort_by_last_letter(words):
    """Return the non-empty strings of `words` sorted by their last character; words with
    the same last character keep their order.
    """
    raise NotImplementedError
