def kelvin_to_celsius(k):
    return k - 273.15
