def sorted_copy(xs):
    """Return a new list with the numbers of `xs` sorted from smallest to largest.
    """
    raise NotImplementedError
