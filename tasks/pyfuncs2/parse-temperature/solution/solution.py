def parse_temperature(text):
    text = text.strip()
    if not text:
        return None
    unit = text[-1].upper()
    try:
        value = float(text[:-1])
    except ValueError:
        return None
    if unit == "C":
        return value
    if unit == "F":
        return (value - 32) * 5 / 9
    return None
