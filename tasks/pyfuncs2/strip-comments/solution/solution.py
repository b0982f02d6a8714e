def strip_comments(text):
    return [line for line in text.splitlines() if not line.lstrip().startswith("#")]
