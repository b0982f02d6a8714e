def names_by_group(records, field):
    """`records` is a list of dicts with the key `'name'` and a string under the key
    `field`. Return a dict mapping each value of `field` to the list of names of the records
    holding it, in the order of the records.
    """
    raise NotImplementedError
