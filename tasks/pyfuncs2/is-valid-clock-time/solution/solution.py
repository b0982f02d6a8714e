def is_valid_clock_time(text):
    if len(text) != 5 or text[2] != ":":
        return False
    h, m = text[:2], text[3:]
    if not (h.isdigit() and m.isdigit() and h.isascii() and m.isascii()):
        return False
    return int(h) <= 23 and int(m) <= 59
