def count_palindromic_substrings(s):
    """Return how many substrings of the string `s` are palindromes, counting every start
    and end position separately (`'aaa'` has 6: three `'a'`, two `'aa'`, one `'aaa'`).
    Single characters count; the empty string has 0.
    """
    raise NotImplementedError
