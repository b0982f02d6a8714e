def kmh_to_mps(kmh):
    return round(kmh / 3.6, 2)
