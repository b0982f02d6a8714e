def is_valid_clock_time(text):
    """Return True if the string `text` is a valid time `'HH:MM'` on a 24-hour clock:
    exactly two digits of hours from `00` to `23`, a colon, and exactly two digits of
    minutes from `00` to `59`. Anything else (one-digit hours, seconds, spaces, `'24:00'`)
    gives False.
    """
    raise NotImplementedError
