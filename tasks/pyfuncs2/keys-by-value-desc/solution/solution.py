def keys_by_value_desc(d):
    return [k for k, v in sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))]
