def time_of_day_greeting(hour):
    """Return a greeting for the hour `hour` (0-23): `'Good morning'` from 5 up to 11,
    `'Good afternoon'` from 12 up to 17, `'Good evening'` from 18 up to 21, and `'Good
    night'` for 22, 23 and 0 up to 4.
    """
    raise NotImplementedError
