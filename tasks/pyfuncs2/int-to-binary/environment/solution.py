def int_to_binary(n):
    """Return the binary digits of the integer `n` as a string without a prefix; a negative
    number gets a leading `-` (`-5` gives `'-101'`); `0` gives `'0'`.
    """
    raise NotImplementedError
