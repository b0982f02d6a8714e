def bump_count(counts, key):
    """`counts` is a dict of integer counts. Return a new dict like `counts` in which the
    count of `key` is one higher; a missing key starts from 0, so it ends at 1. The input
    dict is not changed.
    """
    raise NotImplementedError
