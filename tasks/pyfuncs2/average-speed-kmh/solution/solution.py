def average_speed_kmh(km, minutes):
    if minutes == 0:
        return None
    return km * 60 / minutes
