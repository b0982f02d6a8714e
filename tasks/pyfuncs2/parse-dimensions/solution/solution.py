def parse_dimensions(text):
    parts = text.lower().split("x")
    numbers = []
    for part in parts:
        part = part.strip()
        if not part.isdigit():
            return None
        numbers.append(int(part))
    return numbers
