def cylinder_volume(r, h):
    """Return the volume of a cylinder of radius `r` and height `h`, `math.pi * r ** 2 * h`,
    as a float.
    """
    raise NotImplementedError
