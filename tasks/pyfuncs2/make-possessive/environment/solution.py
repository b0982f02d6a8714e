def make_possessive(name):
    """Return the possessive form of the non-empty name `name`: add `"'s"`, except that a
    name ending in `s` or `S` gets only an apostrophe (`'Bob'` gives `"Bob's"`, `'James'`
    gives `"James'"`).
    """
    raise NotImplementedError
