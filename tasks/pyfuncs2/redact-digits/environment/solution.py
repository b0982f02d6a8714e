def redact_digits(s):
    """Return the string `s` with every ASCII digit `0`-`9` replaced by `'#'`; every other
    character stays.
    """
    raise NotImplementedError
