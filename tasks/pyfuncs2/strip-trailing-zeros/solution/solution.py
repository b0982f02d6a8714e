def strip_trailing_zeros(text):
    if "." not in text:
        return text
    return text.rstrip("0").rstrip(".")
