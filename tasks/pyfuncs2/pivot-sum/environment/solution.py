def pivot_sum(records):
    """`records` is a list of dicts with the string keys `'row'` and `'col'` and a number
    under `'value'`. Return a nested dict mapping each row name to a dict that maps each
    column name seen with that row to the sum of the values of its records.
    """
    raise NotImplementedError
