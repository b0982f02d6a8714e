def sort_by_frequency(xs):
    """Return the items of `xs` sorted so that more frequent values come first; values
    equally frequent are ordered ascending; every copy is kept.
    """
    raise NotImplementedError
