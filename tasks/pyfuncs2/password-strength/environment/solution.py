def password_strength(pw):
    """Return the list of rules the string `pw` breaks, in this order, using these names:
    `'length'` (fewer than 8 characters), `'upper'` (no upper-case letter), `'lower'` (no
    lower-case letter), `'digit'` (no digit), `'space'` (contains a space).
    """
    raise NotImplementedError
