def reverse_integer(n):
    """Return the integer whose digits are those of `n` in reverse order, keeping the sign
    (`-120` becomes `-21`).
    """
    raise NotImplementedError
