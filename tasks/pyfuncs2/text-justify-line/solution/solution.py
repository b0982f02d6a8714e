def text_justify_line(words, width):
    if len(words) == 1:
        return words[0].ljust(width)
    gaps = len(words) - 1
    spaces = width - sum(len(w) for w in words)
    line = ""
    for i, w in enumerate(words[:-1]):
        line += w + " " * (spaces // gaps + (1 if i < spaces % gaps else 0))
    return line + words[-1]
