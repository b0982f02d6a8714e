def average_by_group(records):
    """`records` is a list of dicts with a string under `'group'` and a number under
    `'score'`. Return a dict mapping each group to the average score of its records, as a
    float.
    """
    raise NotImplementedError
