def max_paren_depth(s):
    """Return the maximum nesting depth of round parentheses in the string `s`, whose
    parentheses are balanced: `'(a(b)c)'` gives 2, a string without parentheses gives 0.
    Other characters are ignored.
    """
    raise NotImplementedError
