def jaccard_similarity(a, b):
    """Treat the lists `a` and `b` as sets of values. Return the number of values in both
    divided by the number of values in either, as a float; two empty lists give `1.0`.
    """
    raise NotImplementedError
