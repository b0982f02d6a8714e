def parse_temperature(text):
    """The string `text` is a number followed by a unit letter, `C` or `F` in either case
    (`'72F'`, `'-5.5c'`). Return the temperature in degrees Celsius as a float: a Fahrenheit
    value is converted with `(f - 32) * 5 / 9`. Return `None` for any other unit or a part
    before it that is not a number.
    """
    raise NotImplementedError
