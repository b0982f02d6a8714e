def chinese_zodiac(year):
    """Return the Chinese zodiac animal of the year `year` by the simple twelve-year cycle
    (ignore the lunar new year): the animals in order are Rat, Ox, Tiger, Rabbit, Dragon,
    Snake, Horse, Goat, Monkey, Rooster, Dog, Pig, and 2020 is a Rat year (so 2021 is Ox and
    2019 is Pig).
    """
    raise NotImplementedError
