def digit_parity_counts(n):
    """Return `[evens, odds]`: how many decimal digits of the integer `n` are even and how
    many are odd, ignoring its sign (0 has one even digit).
    """
    raise NotImplementedError
