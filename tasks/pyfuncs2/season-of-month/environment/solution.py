def season_of_month(m):
    """Return the season of the month number `m` (1-12): `'winter'` for 12, 1 and 2;
    `'spring'` for 3 to 5; `'summer'` for 6 to 8; `'autumn'` for 9 to 11.
    """
    raise NotImplementedError
