def pluralize_count(n, word):
    return f"{n} {word}" if abs(n) == 1 else f"{n} {word}s"
