def cents_to_dollars(cents):
    """Return the amount `cents` (a non-negative integer number of cents) as a dollar
    string: a `'$'`, the whole dollars, a dot and always two digits of cents (`1205` gives
    `'$12.05'`, `7` gives `'$0.07'`).
    """
    raise NotImplementedError
