def is_ugly_number(n):
    """Return True if the integer `n` is positive and has no prime factor other than 2, 3
    and 5 (1 counts, having no prime factor at all). Zero and negative numbers give False.
    """
    raise NotImplementedError
