def point_in_rectangle(rect, p):
    """`rect` is `[left, bottom, right, top]` with `left < right` and `bottom < top`, and
    `p` is a point `[x, y]`. Return `True` if the point lies inside the rectangle or on its
    border.
    """
    raise NotImplementedError
