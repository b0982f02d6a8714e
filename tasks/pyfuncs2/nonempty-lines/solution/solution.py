def nonempty_lines(text):
    return sum(1 for line in text.splitlines() if line.strip())
