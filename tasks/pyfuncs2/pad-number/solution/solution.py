def pad_number(n, width):
    return f"{n:0{width}d}"
