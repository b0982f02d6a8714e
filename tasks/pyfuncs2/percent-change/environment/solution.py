def percent_change(old, new):
    """Return the percent change from the value `old` to the value `new`, `(new - old) /
    abs(old) * 100`, rounded to 1 decimal place with `round`. Return `None` when `old` is
    zero.
    """
    raise NotImplementedError
