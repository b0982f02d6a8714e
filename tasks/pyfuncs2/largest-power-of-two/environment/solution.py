def largest_power_of_two(n):
    """Return the largest power of two (1, 2, 4, 8, ...) that is less than or equal to the
    positive integer `n`.
    """
    raise NotImplementedError
