def underline_title(title):
    """Return the title `title`, a newline, and a line of `'='` characters exactly as long
    as the title (as a Markdown heading is underlined). An empty title gives just `'\n'`.
    """
    raise NotImplementedError
