def is_sorted(xs):
    """Return `True` if the numbers in `xs` never decrease from one item to the next (equal
    neighbours are fine).
    """
    raise NotImplementedError
