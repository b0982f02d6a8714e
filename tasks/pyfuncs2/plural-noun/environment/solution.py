def plural_noun(word):
    """Return the plural of the lower-case English noun `word` by these rules only: a word
    ending in `s`, `x`, `z`, `ch` or `sh` gets `'es'`; a word ending in `y` after a
    consonant changes the `y` to `'ies'` (`'city'` -> `'cities'`, but `'day'` -> `'days'`);
    every other word gets `'s'`.
    """
    raise NotImplementedError
