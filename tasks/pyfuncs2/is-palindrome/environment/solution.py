def is_palindrome(s):
    """Return `True` if the string `s` reads the same backwards as forwards, comparing every
    character exactly (case and spaces count).
    """
    raise NotImplementedError
