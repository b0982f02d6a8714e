def gray_code(n):
    """Return the `n`-bit reflected Gray code sequence as a list of integers, starting at 0
    (`[0]` for `n` = 0); consecutive numbers differ in exactly one bit.
    """
    raise NotImplementedError
