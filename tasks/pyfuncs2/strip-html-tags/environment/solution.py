def strip_html_tags(s):
    """Return the string `s` with every tag removed, where a tag is a `'<'`, the characters
    after it, and the next `'>'`. A `'<'` that has no `'>'` after it is kept as text, and so
    is everything after it; a `'>'` outside a tag is kept too.
    """
    raise NotImplementedError
