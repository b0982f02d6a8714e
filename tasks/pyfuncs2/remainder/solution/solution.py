def remainder(a, b):
    return a % b
