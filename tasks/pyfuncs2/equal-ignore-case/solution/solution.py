def equal_ignore_case(a, b):
    return a.lower() == b.lower()
