def quote_string(s):
    """Return the string `s` wrapped in double quotes, with every backslash in it doubled
    and every double quote in it preceded by a backslash (backslashes first, so `a"b`
    becomes `"a\"b"`).
    """
    raise NotImplementedError
