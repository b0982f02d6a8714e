def parse_query(q):
    """Parse the URL query string `q` (like `'a=1&b=two'`, without a leading `?`) into a
    dict of strings; a key without `=` maps to `''`; a later repeat of a key wins; empty
    pieces are skipped.
    """
    raise NotImplementedError
