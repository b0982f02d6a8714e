def point_in_rectangle(rect, p):
    left, bottom, right, top = rect
    return left <= p[0] <= right and bottom <= p[1] <= top
