def celsius_to_fahrenheit(c):
    return c * 9 / 5 + 32
