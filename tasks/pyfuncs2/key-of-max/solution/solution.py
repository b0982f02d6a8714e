def key_of_max(d):
    if not d:
        return None
    return min(d, key=lambda k: (-d[k], k))
