def added_letter(s, t):
    """The string `t` was made by shuffling the string `s` and inserting one more character
    somewhere. Return that extra character. When the extra character also occurs in `s`, it
    is still the one `t` has one more of (`s = 'aab'`, `t = 'abaa'` gives `'a'`).
    """
    raise NotImplementedError
