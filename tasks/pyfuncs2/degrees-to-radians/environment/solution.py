def degrees_to_radians(deg):
    """Return the angle `deg` given in degrees converted to radians, as a float (180 degrees
    are `math.pi` radians).
    """
    raise NotImplementedError
