def char_after(s, c):
    """Return the character that follows the first occurrence of the character `c` in the
    string `s`. Return the empty string if `c` does not occur in `s` or its first occurrence
    is the last character.
    """
    raise NotImplementedError
