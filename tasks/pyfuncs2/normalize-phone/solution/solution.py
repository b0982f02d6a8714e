def normalize_phone(s):
    d = "".join(c for c in s if c.isdigit())
    if len(d) == 11 and d[0] == "1":
        d = d[1:]
    if len(d) != 10:
        return None
    return f"({d[:3]}) {d[3:6]}-{d[6:]}"
