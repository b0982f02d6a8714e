def keys_at_least(d, threshold):
    return sorted(k for k, v in d.items() if v >= threshold)
