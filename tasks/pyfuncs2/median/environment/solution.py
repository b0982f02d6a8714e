def median(xs):
    """Return the median of the non-empty number list `xs`: the middle value after sorting,
    or the average of the two middle values for an even length (a float then).
    """
    raise NotImplementedError
