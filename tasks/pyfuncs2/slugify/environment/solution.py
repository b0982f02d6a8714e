def slugify(title):
    """Return a URL slug of `title`: lower case, every run of characters that are not ASCII
    letters or digits becomes one `-`, and no `-` at either end.
    """
    raise NotImplementedError
