def zigzag_text(s, rows):
    """Write the characters of `s` in a zigzag over `rows` rows (down row 0, 1, ..., rows-1,
    then back up, and so on) and return the rows read one after another. One row returns `s`
    unchanged.
    """
    raise NotImplementedError
