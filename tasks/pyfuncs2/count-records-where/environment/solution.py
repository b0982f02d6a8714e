def count_records_where(records, field, value):
    """`records` is a list of dicts. Return how many of them have the key `field` with a
    value equal to `value`; a record without the key does not count.
    """
    raise NotImplementedError
