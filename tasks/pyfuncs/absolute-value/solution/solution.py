def absolute(n):
    return -n if n < 0 else n
