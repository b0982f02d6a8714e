def code_to_char(n):
    return chr(n)
