def parse_kv(text):
    """Parse a string of `key=value` pairs separated by semicolons into a dict of strings.
    Strip whitespace around keys and values; skip empty segments; split each pair at its
    first `=`.
    """
    raise NotImplementedError
