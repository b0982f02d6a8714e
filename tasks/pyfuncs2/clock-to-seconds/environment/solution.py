def clock_to_seconds(t):
    """The string `t` is a time `'HH:MM:SS'`. Return the number of seconds since midnight.
    """
    raise NotImplementedError
