def binary_to_int(s):
    """The string `s` holds a non-negative integer in binary (only `0` and `1`). Return its
    value.
    """
    raise NotImplementedError
