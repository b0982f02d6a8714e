def hms_add_minutes(t, minutes):
    """The string `t` is a 24-hour time `'HH:MM'`. Return the time `minutes` minutes later
    (`minutes` may be negative or over a day) as `'HH:MM'`, wrapping around midnight.
    """
    raise NotImplementedError
