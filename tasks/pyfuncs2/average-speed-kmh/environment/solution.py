def average_speed_kmh(km, minutes):
    """A trip covered `km` kilometres in `minutes` minutes. Return the average speed in
    kilometres per hour as a float, or `None` if `minutes` is zero.
    """
    raise NotImplementedError
