def bigger_string(a, b):
    return b if len(b) > len(a) else a
