def is_number_text(s):
    if s[:1] in ("+", "-"):
        s = s[1:]
    digits = s.replace(".", "", 1)
    return digits.isdigit() and digits.isascii()
