def parse_duration(text):
    """Parse a duration such as '1h30m15s', '45m' or '2h' into a number of seconds. Units are
    h, m and s, each at most once and in that order, each after a whole number. Return
    `None` for anything else (including the empty string).
    """
    raise NotImplementedError
