def parse_fraction(text):
    parts = text.split("/")
    if len(parts) > 2:
        return None
    try:
        numbers = [int(p.strip()) for p in parts]
    except ValueError:
        return None
    if len(numbers) == 1:
        return float(numbers[0])
    if numbers[1] == 0:
        return None
    return numbers[0] / numbers[1]
