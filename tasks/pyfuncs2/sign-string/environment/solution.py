def sign_string(n):
    """Return the integer `n` as a string that always shows its sign: a positive number gets
    a leading `'+'` (`'+5'`), a negative one keeps its `'-'`, and zero is just `'0'`.
    """
    raise NotImplementedError
