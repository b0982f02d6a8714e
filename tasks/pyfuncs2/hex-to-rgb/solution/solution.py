def hex_to_rgb(color):
    digits = color[1:]
    if len(digits) == 3:
        digits = "".join(c * 2 for c in digits)
    return [int(digits[i : i + 2], 16) for i in (0, 2, 4)]
