def rgb_function_to_hex(text):
    """The string `text` is a CSS colour `'rgb(r, g, b)'` (any spaces around the numbers,
    the name in lower case). Return it as `'#rrggbb'` in lower-case hexadecimal, each
    channel as two digits. Return `None` if the form is wrong or a channel is not a whole
    number from 0 to 255.
    """
    raise NotImplementedError
