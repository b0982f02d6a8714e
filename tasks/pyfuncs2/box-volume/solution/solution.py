def box_volume(length, width, height):
    return length * width * height
