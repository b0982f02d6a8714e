def parse_kv(text):
    out = {}
    for part in text.split(';'):
        if not part.strip():
            continue
        key, _, value = part.partition('=')
        out[key.strip()] = value.strip()
    return out
