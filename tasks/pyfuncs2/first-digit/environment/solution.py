def first_digit(n):
    """Return the first (leftmost) decimal digit of the integer `n`, ignoring a minus sign
    (`-385` gives 3).
    """
    raise NotImplementedError
