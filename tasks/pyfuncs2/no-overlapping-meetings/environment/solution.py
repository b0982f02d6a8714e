def no_overlapping_meetings(meetings):
    """`meetings` is a list of `[start, end]` times with `start < end`, in any order. Return
    `True` if no two meetings overlap; a meeting may start exactly when another ends.
    """
    raise NotImplementedError
