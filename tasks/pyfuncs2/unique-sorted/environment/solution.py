def unique_sorted(xs):
    """Return the numbers of `xs` sorted ascending with duplicates removed.
    """
    raise NotImplementedError
