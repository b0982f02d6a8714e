def round_two(x):
    """Return the number `x` rounded to 2 decimal places with Python's `round`.
    """
    raise NotImplementedError
