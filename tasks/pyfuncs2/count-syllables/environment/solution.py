def count_syllables(word):
    """Estimate the syllables of the English word `word`: count the groups of consecutive
    vowels (a, e, i, o, u, y; either case), then subtract one if the word ends in a lower-
    case `'e'` and has more than one group. A word with letters gives at least 1; an empty
    word gives 0.
    """
    raise NotImplementedError
