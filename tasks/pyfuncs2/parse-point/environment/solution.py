def parse_point(text):
    """The string `text` is a point written as `'(x, y)'`: two integers (either may be
    negative) inside parentheses, separated by a comma, with optional spaces anywhere
    between the parts. Return `[x, y]` as ints, or `None` if the text is not of that form.
    """
    raise NotImplementedError
