def markdown_link_parts(s):
    """Find the first Markdown link `[text](url)` in the string `s` and return `[text,
    url]`. The text has no `]` and the url has no `)`; either may be empty. Return `None` if
    `s` holds no link (a `[...]` not followed at once by `(...)` is not a link).
    """
    raise NotImplementedError
