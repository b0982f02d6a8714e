def split_on_value(xs, sep):
    """Cut the list `xs` at every item equal to `sep`, which is dropped, and return the list
    of the pieces in order, as `str.split` does for strings: `k` separators make `k + 1`
    pieces, some maybe empty (an empty `xs` gives `[[]]`).
    """
    raise NotImplementedError
