def names_missing_field(records, field):
    """`records` is a list of dicts, each with a `'name'`. Return, in order, the names of
    the records that lack the key `field` or hold `None` under it.
    """
    raise NotImplementedError
