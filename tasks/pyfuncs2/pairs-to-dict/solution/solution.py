def pairs_to_dict(pairs):
    return {k: v for k, v in pairs}
