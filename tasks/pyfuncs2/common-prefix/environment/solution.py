def common_prefix(a, b):
    """Return the longest string that both `a` and `b` start with (case-sensitive); `''`
    when their first characters differ or either string is empty.
    """
    raise NotImplementedError
