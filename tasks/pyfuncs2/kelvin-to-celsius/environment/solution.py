def kelvin_to_celsius(k):
    """Return the temperature `k` given in kelvin converted to degrees Celsius (subtract
    273.15).
    """
    raise NotImplementedError
