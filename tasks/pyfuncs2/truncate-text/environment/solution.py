def truncate_text(s, n):
    """If the string `s` is longer than `n` characters (`n` >= 3), return its first `n - 3`
    characters followed by `'...'` (so the result has `n` characters); otherwise return `s`
    unchanged.
    """
    raise NotImplementedError
