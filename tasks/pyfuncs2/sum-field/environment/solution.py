def sum_field(records, field):
    """`records` is a list of dicts, each holding a number under the key `field`. Return the
    sum of those numbers (0 for an empty list).
    """
    raise NotImplementedError
