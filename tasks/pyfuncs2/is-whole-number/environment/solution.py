def is_whole_number(x):
    """Return `True` if the number `x` is a whole number, that is, it has no fractional part
    (`3.0` and `-2` give `True`, `2.5` gives `False`).
    """
    raise NotImplementedError
