def pluralize_count(n, word):
    """Return the integer `n` and the noun `word` as one phrase: `'1 apple'` when `n` is
    exactly 1 (or -1), otherwise the noun with an `'s'` added (`'0 apples'`, `'3 apples'`,
    `'-2 apples'`).
    """
    raise NotImplementedError
