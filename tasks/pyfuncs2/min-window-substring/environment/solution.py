def min_window_substring(s, t):
    """Return the shortest substring of `s` that contains every character of `t`, counting
    repeats (if `t` has two `'a'`, the window needs two). When several shortest windows
    exist, return the leftmost. Return `''` if there is none or `t` is empty.
    """
    raise NotImplementedError
