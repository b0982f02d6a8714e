def atbash(s):
    """Encode `s` with the Atbash cipher: each letter is replaced by its mirror in the
    alphabet (a<->z, b<->y, ...), keeping its case; other characters stay as they are.
    """
    raise NotImplementedError
