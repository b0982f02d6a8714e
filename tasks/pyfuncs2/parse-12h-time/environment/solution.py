def parse_12h_time(text):
    """The string `text` is a time on a 12-hour clock: hours 1-12, a colon, two digits of
    minutes, a space and `AM` or `PM` (`'7:05 PM'`). Return the minutes since midnight:
    `'12:00 AM'` is 0, `'12:30 PM'` is 750, `'7:05 PM'` is 1145.
    """
    raise NotImplementedError
