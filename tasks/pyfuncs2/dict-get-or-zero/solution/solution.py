def dict_get_or_zero(d, key):
    return d.get(key, 0)
