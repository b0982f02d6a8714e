def rename_key(d, old, new):
    result = dict(d)
    if old in result:
        result[new] = result.pop(old)
    return result
