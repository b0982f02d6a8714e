def swap_case(s):
    """Return the string `s` with every lower-case letter made upper case and every upper-
    case letter made lower case; other characters stay.
    """
    raise NotImplementedError
