def repeated_values(xs):
    """Return the sorted list of the distinct values that occur more than once in the number
    list `xs` (each such value listed once; empty when nothing repeats).
    """
    raise NotImplementedError
