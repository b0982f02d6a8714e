def clock_to_seconds(t):
    h, m, s = (int(part) for part in t.split(":"))
    return h * 3600 + m * 60 + s
