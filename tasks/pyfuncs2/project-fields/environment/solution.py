def project_fields(records, fields):
    """Return a list with one new dict per dict of `records`, holding exactly the keys of
    the list `fields`: each with the record's value, or `None` when the record lacks that
    key.
    """
    raise NotImplementedError
