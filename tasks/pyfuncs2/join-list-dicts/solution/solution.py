def join_list_dicts(a, b):
    out = {k: list(v) for k, v in a.items()}
    for k, v in b.items():
        out[k] = out.get(k, []) + v
    return out
