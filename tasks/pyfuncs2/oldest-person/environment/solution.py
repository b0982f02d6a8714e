def oldest_person(people):
    """`people` is a list of dicts with the keys `'name'` (a string) and `'age'` (an
    integer). Return the name of the oldest person; the first one in the list on a tie;
    `None` for an empty list.
    """
    raise NotImplementedError
