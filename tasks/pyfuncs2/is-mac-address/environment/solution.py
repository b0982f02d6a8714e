def is_mac_address(s):
    """Return True if the string `s` is a MAC address: six groups of exactly two hexadecimal
    digits (0-9, a-f, A-F), separated by colons, or all separated by dashes instead
    (`'00:1A:2b:3C:4d:5E'`, `'00-1a-2b-3c-4d-5e'`); mixing the two separators gives False.
    """
    raise NotImplementedError
