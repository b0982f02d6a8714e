def count_digits(n):
    """Return how many decimal digits the integer `n` has, ignoring a minus sign (`0` has
    one digit).
    """
    raise NotImplementedError
