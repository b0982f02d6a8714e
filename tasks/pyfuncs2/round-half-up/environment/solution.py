def round_half_up(x):
    """Return the non-negative number `x` rounded to the nearest integer, where a number
    exactly halfway always goes up (`2.5` gives 3, `3.5` gives 4), unlike Python's `round`.
    Return an int.
    """
    raise NotImplementedError
