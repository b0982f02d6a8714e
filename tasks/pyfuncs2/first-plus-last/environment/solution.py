def first_plus_last(xs):
    """Return the sum of the first and the last number of the non-empty list `xs` (a one-
    item list gives twice its item).
    """
    raise NotImplementedError
