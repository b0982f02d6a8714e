def first_per_field_value(records, field):
    """`records` is a list of dicts, each with the key `field`. Return, in their original
    order, only the first record for each distinct value of `field` (later records with an
    already seen value are dropped).
    """
    raise NotImplementedError
