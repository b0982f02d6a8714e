def list_max_minus_min(xs):
    """Return the largest number of the non-empty list `xs` minus the smallest one.
    """
    raise NotImplementedError
