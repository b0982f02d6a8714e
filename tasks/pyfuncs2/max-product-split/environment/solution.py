def max_product_split(n):
    """Split the integer `n` (`n >= 2`) into a sum of at least two positive integers and
    return the largest possible product of those parts (10 = 3 + 3 + 4 gives 36; 2 = 1 + 1
    gives 1).
    """
    raise NotImplementedError
