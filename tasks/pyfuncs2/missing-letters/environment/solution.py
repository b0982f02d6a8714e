def missing_letters(s):
    """Return, as one string in alphabetical order, the lower-case letters a-z that do not
    occur in the string `s` in either case (an empty string lacks all 26).
    """
    raise NotImplementedError
