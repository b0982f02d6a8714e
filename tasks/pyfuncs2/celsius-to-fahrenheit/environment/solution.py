def celsius_to_fahrenheit(c):
    """Return the temperature `c` given in degrees Celsius converted to degrees Fahrenheit:
    `c * 9 / 5 + 32`, as a float.
    """
    raise NotImplementedError
