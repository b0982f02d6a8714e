def longest_valid_parens(s):
    """The string `s` holds only `'('` and `')'`. Return the length of its longest substring
    (contiguous) that is a well-formed, balanced parenthesis sequence (`')()())'` gives 4
    for `'()()'`), or 0 if there is none.
    """
    raise NotImplementedError
