def group_by_first_letter(words):
    """Return a dict mapping each lower-cased first letter to the list of words of `words`
    that start with it (either case), in their original order; empty strings are skipped.
    """
    raise NotImplementedError
