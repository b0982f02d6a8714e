def percent_change(old, new):
    if old == 0:
        return None
    return round((new - old) / abs(old) * 100, 1)
