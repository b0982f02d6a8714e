def word_lengths(text):
    """Return a dict mapping every whitespace-separated word of `text` to its length.
    """
    raise NotImplementedError
