def invert(d):
    return {v: k for k, v in d.items()}
