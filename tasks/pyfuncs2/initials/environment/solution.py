def initials(name):
    """Return the upper-case first letters of the whitespace-separated words of `name`, each
    followed by a dot (`'ada lovelace'` gives `'A.L.'`).
    """
    raise NotImplementedError
