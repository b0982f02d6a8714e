def rows_to_columns(rows):
    """`rows` is a list of dicts that all have the same keys. Return a dict mapping each key
    to the list of the rows' values under it, in row order; an empty list gives an empty
    dict.
    """
    raise NotImplementedError
