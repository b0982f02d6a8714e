def values_of_keys(d, keys):
    return [d.get(k) for k in keys]
