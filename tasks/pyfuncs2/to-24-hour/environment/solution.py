def to_24_hour(t):
    """The string `t` is a 12-hour time like `'07:05PM'` or `'12:00AM'`. Return it as a
    24-hour `'HH:MM'` (12 AM is 00, 12 PM is 12).
    """
    raise NotImplementedError
