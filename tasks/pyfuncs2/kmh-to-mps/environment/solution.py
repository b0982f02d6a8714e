def kmh_to_mps(kmh):
    """Convert the speed `kmh` in kilometres per hour to metres per second (divide by 3.6)
    and return it rounded to 2 decimal places with `round`.
    """
    raise NotImplementedError
