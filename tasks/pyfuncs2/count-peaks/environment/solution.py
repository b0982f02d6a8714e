def count_peaks(xs):
    """Return how many items of the list `xs` are strictly greater than both the item just
    before and the item just after them. The first and last items never count.
    """
    raise NotImplementedError
