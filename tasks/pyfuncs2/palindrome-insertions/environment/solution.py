def palindrome_insertions(s):
    """Return the smallest number of characters that must be inserted anywhere into the
    string `s` to make it a palindrome (`'ab'` needs 1, `'mbadm'` needs 2: `'mbdadbm'`). A
    palindrome, including the empty string, needs 0.
    """
    raise NotImplementedError
