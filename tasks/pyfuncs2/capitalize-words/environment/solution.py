def capitalize_words(s):
    """The words of the string `s` are separated by single spaces. Return `s` with the first
    character of each word in upper case and every other character unchanged.
    """
    raise NotImplementedError
