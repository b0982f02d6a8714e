def edit_distance(a, b):
    """Return the Levenshtein distance between the strings `a` and `b`: the fewest single-
    character insertions, deletions and substitutions that turn `a` into `b`.
    """
    raise NotImplementedError
