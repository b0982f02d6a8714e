def find_record(records, field, value):
    """`records` is a list of dicts. Return the first record whose value under the key
    `field` equals `value` (a record without the key never matches), or `None` when no
    record matches.
    """
    raise NotImplementedError
