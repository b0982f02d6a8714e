def apply_discount(price, percent):
    """Return the price `price` after a discount of `percent` percent is taken off, as a
    float (`200` with `25` gives `150.0`).
    """
    raise NotImplementedError
