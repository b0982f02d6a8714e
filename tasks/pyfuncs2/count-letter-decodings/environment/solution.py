def count_letter_decodings(s):
    """Letters are encoded as numbers: A = 1, B = 2, ..., Z = 26. Return how many ways the
    digit string `s` can be split into such codes, read left to right (`'12'` is AB or L: 2
    ways; `'226'` has 3). A code never starts with 0, so `'06'` and `'0'` have 0 ways; the
    empty string has 1.
    """
    raise NotImplementedError
