def count_by(records, key):
    """`records` is a list of dicts. Return a dict mapping each value of the field `key`
    (always a string) to the number of records that hold it; records without that field are
    skipped.
    """
    raise NotImplementedError
