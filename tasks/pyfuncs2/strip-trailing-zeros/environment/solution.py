def strip_trailing_zeros(text):
    """The string `text` is a decimal number. If it has a decimal point, drop the zeros at
    the end of its fraction, and the point too if nothing is left after it (`'3.1400'` gives
    `'3.14'`, `'5.000'` gives `'5'`). Zeros before the point are never removed (`'100'`
    stays `'100'`).
    """
    raise NotImplementedError
