def slice_between(xs, start, stop):
    """Return the items of the list `xs` from index `start` up to but not including index
    `stop`, as Python's `xs[start:stop]` gives them (`0 <= start`, `0 <= stop`).
    """
    raise NotImplementedError
