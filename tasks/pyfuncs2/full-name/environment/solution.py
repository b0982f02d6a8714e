def full_name(person):
    """`person` is a dict with the string keys `'first'` and `'last'`. Return the first
    name, one space, then the last name.
    """
    raise NotImplementedError
