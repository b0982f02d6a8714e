def circle_area(r):
    """Return the area of a circle of radius `r`, using `math.pi`.
    """
    raise NotImplementedError
