def word_positions(text):
    """Return a dict mapping each lower-cased word of `text` (split on whitespace) to the
    list of its positions (0-based word indexes).
    """
    raise NotImplementedError
