def abbreviate_name(name):
    """The string `name` holds one or more words separated by spaces. Keep the last word
    (the surname) whole and shorten every earlier word to its first letter in upper case
    followed by a dot; join the parts with single spaces (`'john ronald tolkien'` gives `'J.
    R. tolkien'`). A single word is returned unchanged; extra spaces are ignored.
    """
    raise NotImplementedError
