def bit_distance(a, b):
    """Return at how many bit positions the binary forms of the non-negative integers `a`
    and `b` differ (the shorter form is padded with leading zeros).
    """
    raise NotImplementedError
