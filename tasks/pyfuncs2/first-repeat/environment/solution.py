def first_repeat(xs):
    """Return the first value of the list `xs` whose value was already seen earlier in the
    list, or `None` when all values differ.
    """
    raise NotImplementedError
