def word_lengths(words):
    """Return a list holding the length of each string of the list `words`, in the same
    order.
    """
    raise NotImplementedError
