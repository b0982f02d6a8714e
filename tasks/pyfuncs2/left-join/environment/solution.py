def left_join(left, right, key):
    """For each dict of `left`, in order, return a new dict holding the fields of the first
    dict of `right` whose value under `key` equals the left record's value under `key`, then
    the left record's own fields on top (so the left value wins on a shared field). A left
    record with no match is copied unchanged.
    """
    raise NotImplementedError
