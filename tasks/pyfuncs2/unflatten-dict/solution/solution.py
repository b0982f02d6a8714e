def unflatten_dict(d):
    out = {}
    for path in sorted(d):
        node = out
        parts = path.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = d[path]
    return out
