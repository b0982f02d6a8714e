def rectangle_area(width, height):
    """Return the area of a rectangle whose sides are `width` and `height`.
    """
    raise NotImplementedError
