def parse_percent(text):
    text = text.strip()
    if not text.endswith("%"):
        return None
    try:
        return float(text[:-1].strip()) / 100
    except ValueError:
        return None
