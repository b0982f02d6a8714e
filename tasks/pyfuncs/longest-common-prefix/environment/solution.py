def common_prefix(words):
    """Return the longest string that is a prefix of every string in `words`; return '' when
    `words` is empty.
    """
    raise NotImplementedError
