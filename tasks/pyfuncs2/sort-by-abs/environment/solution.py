def sort_by_abs(xs):
    """Return the numbers of `xs` sorted by their absolute value; numbers with the same
    absolute value keep their order.
    """
    raise NotImplementedError
