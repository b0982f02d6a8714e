def join_english(items):
    """Join the list of strings `items` into an English phrase: no items gives `''`, one
    gives the item, two give `'a and b'`, and three or more give the items separated by `',
    '` with `' and '` before the last (`'a, b and c'`, no comma before `and`).
    """
    raise NotImplementedError
