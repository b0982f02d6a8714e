def parse_fraction(text):
    """The string `text` is a fraction `'a/b'` of two integers (the numerator may be
    negative; spaces around the parts are allowed), or a single integer. Return its value as
    a float, or `None` if the denominator is zero or the text is not of that form.
    """
    raise NotImplementedError
