def is_palindrome(s):
    """Return `True` if the string `s` reads the same forwards and backwards when you ignore
    case and every character that is not a letter or digit; else `False`. The empty string
    is a palindrome.
    """
    raise NotImplementedError
