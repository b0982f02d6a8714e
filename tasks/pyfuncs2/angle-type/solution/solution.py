def angle_type(deg):
    if deg < 90:
        return "acute"
    if deg == 90:
        return "right"
    if deg < 180:
        return "obtuse"
    return "straight"
