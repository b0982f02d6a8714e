def pairs_to_dict(pairs):
    """`pairs` is a list of `[key, value]` lists whose keys are strings. Return a dict
    holding each pair; when a key occurs more than once, its last value wins.
    """
    raise NotImplementedError
