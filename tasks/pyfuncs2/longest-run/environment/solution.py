def longest_run(xs):
    """Return the length of the longest stretch of equal neighbouring items in the list `xs`
    (0 for an empty list).
    """
    raise NotImplementedError
