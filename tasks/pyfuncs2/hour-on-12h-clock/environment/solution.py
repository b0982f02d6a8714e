def hour_on_12h_clock(h):
    """Given an hour `h` of a 24-hour clock (0-23), return the hour a 12-hour clock shows
    (1-12): 0 shows 12, 13 shows 1, 12 shows 12.
    """
    raise NotImplementedError
