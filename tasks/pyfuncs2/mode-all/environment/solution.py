def mode_all(xs):
    """Return the sorted list of every value that occurs most often in the list `xs` (all of
    them on a tie; `[]` for an empty list).
    """
    raise NotImplementedError
