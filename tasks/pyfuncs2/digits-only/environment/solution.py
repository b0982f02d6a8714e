def digits_only(s):
    """Return a string of the decimal digits 0-9 of `s`, in order; every other character is
    dropped.
    """
    raise NotImplementedError
