def zeros_to_end(xs):
    """Return a new list with the non-zero numbers of `xs` in their original order, followed
    by as many zeros as `xs` holds.
    """
    raise NotImplementedError
