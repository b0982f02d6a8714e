def keys_with_default(keys, value):
    return {k: value for k in keys}
