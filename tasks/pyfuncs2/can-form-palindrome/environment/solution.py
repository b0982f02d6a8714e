def can_form_palindrome(s):
    """Return True if the characters of the string `s` can be rearranged into a palindrome,
    that is, at most one character occurs an odd number of times. Case matters and every
    character counts (spaces too); the empty string gives True.
    """
    raise NotImplementedError
