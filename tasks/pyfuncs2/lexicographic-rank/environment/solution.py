def lexicographic_rank(s):
    """The string `s` has no repeated character. List all orderings of its characters in
    lexicographic (sorted) order, counting from 1; return the position of `s` itself
    (`'acb'` is 2nd of `'abc'`, `'acb'`, `'bac'`, ...). The empty string has rank 1. Compute
    it without listing the permutations.
    """
    raise NotImplementedError
