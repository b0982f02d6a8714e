def deep_get(data, path, default=None):
    node = data
    for key in path.split('.'):
        if not isinstance(node, dict) or key not in node:
            return default
        node = node[key]
    return node
