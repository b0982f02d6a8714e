def average_of_two(a, b):
    """Return the average (arithmetic mean) of the numbers `a` and `b` as a float.
    """
    raise NotImplementedError
