def hms_add_minutes(t, minutes):
    h, m = (int(x) for x in t.split(":"))
    total = (h * 60 + m + minutes) % (24 * 60)
    return f"{total // 60:02d}:{total % 60:02d}"
