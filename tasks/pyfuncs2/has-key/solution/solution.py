def has_key(d, key):
    return key in d
