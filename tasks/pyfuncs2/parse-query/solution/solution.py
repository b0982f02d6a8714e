def parse_query(q):
    out = {}
    for piece in q.split("&"):
        if not piece:
            continue
        key, _, value = piece.partition("=")
        out[key] = value
    return out
