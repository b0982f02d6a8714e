def int_to_text(n):
    return str(n)
