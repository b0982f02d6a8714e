def is_adult(person):
    """`person` is a dict with the key `'age'` (an integer). Return `True` if the age is 18
    or more, else `False`.
    """
    raise NotImplementedError
