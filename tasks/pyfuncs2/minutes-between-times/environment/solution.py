def minutes_between_times(start, end):
    """The strings `start` and `end` are times `'HH:MM'` on a 24-hour clock. Return how many
    minutes pass from `start` forward to `end`; if `end` is earlier than `start` the end is
    on the next day (`'23:30'` to `'00:15'` is 45), and equal times give 0.
    """
    raise NotImplementedError
