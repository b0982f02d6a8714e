def char_classes(s):
    """Return a list of four counts for the string `s`: letters (`str.isalpha`), digits
    (`str.isdigit`), spaces `' '`, and all other characters.
    """
    raise NotImplementedError
