def equal_ignore_case(a, b):
    """Return `True` if the strings `a` and `b` are equal when upper and lower case are not
    told apart, else `False`.
    """
    raise NotImplementedError
