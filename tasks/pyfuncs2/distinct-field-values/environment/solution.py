def distinct_field_values(records, field):
    """`records` is a list of dicts. Return the sorted list of the distinct values stored
    under the key `field` by the records that have it (all these values are strings).
    """
    raise NotImplementedError
