def line_count(text):
    return len(text.splitlines())
