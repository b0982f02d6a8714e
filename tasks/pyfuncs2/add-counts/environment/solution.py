def add_counts(a, b):
    """`a` and `b` are dicts of counts. Return a new dict holding every key of either, with
    the two counts added (a missing key counts 0).
    """
    raise NotImplementedError
