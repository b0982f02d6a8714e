def c_to_f(celsius):
    """Convert a temperature in degrees Celsius to degrees Fahrenheit (F = C * 9 / 5 + 32) and
    return it.
    """
    raise NotImplementedError
