def verb_ing(verb):
    """Return the lower-case verb `verb` with `'ing'` added. If the verb ends in a single
    `'e'` (not `'ee'`) and is longer than two letters, drop that `'e'` first (`'make'` gives
    `'making'`, `'see'` gives `'seeing'`, `'be'` gives `'being'`); any other verb just gets
    `'ing'`.
    """
    raise NotImplementedError
