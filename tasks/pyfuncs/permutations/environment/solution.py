def permutations(s):
    """Return the list of all distinct permutations of the string `s`, sorted alphabetically.
    The empty string has one permutation, ''.
    """
    raise NotImplementedError
