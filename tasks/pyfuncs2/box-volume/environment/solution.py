def box_volume(length, width, height):
    """Return the volume of a box (cuboid) that is `length` long, `width` wide and `height`
    high.
    """
    raise NotImplementedError
