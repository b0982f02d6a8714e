def round_to_half(x):
    """Return the number `x` rounded to the nearest multiple of 0.5, as a float; a value
    exactly midway between two multiples (a quarter past) rounds up, toward positive
    infinity (1.25 gives 1.5, -1.25 gives -1.0).
    """
    raise NotImplementedError
