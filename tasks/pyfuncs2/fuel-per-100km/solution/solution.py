def fuel_per_100km(litres, km):
    if km == 0:
        return None
    return round(litres / km * 100, 2)
