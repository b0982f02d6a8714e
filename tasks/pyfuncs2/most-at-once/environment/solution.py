def most_at_once(meetings):
    """`meetings` is a list of `[start, end]` times with `start < end`; a meeting occupies
    the time from `start` up to but not including `end`, so one ending at 5 and one starting
    at 5 never meet. Return the largest number of meetings going on at the same moment (0
    for no meetings).
    """
    raise NotImplementedError
