def bitwise_xor(a, b):
    """Return the bitwise exclusive or (XOR) of the non-negative integers `a` and `b`.
    """
    raise NotImplementedError
