def to_24_hour(t):
    h, m = int(t[:2]), t[3:5]
    pm = t[5:].upper() == "PM"
    h = h % 12 + (12 if pm else 0)
    return f"{h:02d}:{m}"
