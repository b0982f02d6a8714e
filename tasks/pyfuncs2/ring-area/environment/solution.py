def ring_area(outer, inner):
    """Return the area of a ring (annulus) between two circles with the same centre: the
    outer radius is `outer`, the inner radius is `inner` (`0 <= inner <= outer`). The area
    is `math.pi * (outer ** 2 - inner ** 2)`, a float.
    """
    raise NotImplementedError
