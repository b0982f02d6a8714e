def missing_number(xs):
    """The list `xs` holds every integer from 1 to `len(xs) + 1` except one, in any order.
    Return the missing one.
    """
    raise NotImplementedError
