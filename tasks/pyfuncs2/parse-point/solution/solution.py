def parse_point(text):
    text = text.strip()
    if not (text.startswith("(") and text.endswith(")")):
        return None
    parts = text[1:-1].split(",")
    if len(parts) != 2:
        return None
    try:
        return [int(p.strip()) for p in parts]
    except ValueError:
        return None
