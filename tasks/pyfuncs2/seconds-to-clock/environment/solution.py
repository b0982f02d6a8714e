def seconds_to_clock(n):
    """Return the non-negative number of seconds `n` as `'H:MM:SS'`: hours without padding
    (they may exceed 23), minutes and seconds with two digits.
    """
    raise NotImplementedError
