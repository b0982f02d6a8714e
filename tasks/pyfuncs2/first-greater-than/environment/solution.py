def first_greater_than(xs, limit):
    """Return the first number of the list `xs` that is strictly greater than `limit`, or
    `None` when there is none.
    """
    raise NotImplementedError
