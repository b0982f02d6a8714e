def largest_digit(n):
    """Return the largest decimal digit (0-9) of the integer `n`, ignoring its sign (`-382`
    gives 8, `0` gives 0).
    """
    raise NotImplementedError
