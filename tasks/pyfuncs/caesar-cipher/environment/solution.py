def caesar(text, shift):
    """Shift every ASCII letter of `text` by `shift` places in the alphabet, wrapping around (z
    + 1 = a) and keeping its case; leave every other character unchanged. `shift` may be
    negative or larger than 26.
    """
    raise NotImplementedError
