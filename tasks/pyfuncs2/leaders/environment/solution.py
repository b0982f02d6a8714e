def leaders(xs):
    """Return, in their original order, the numbers of the list `xs` that are strictly
    greater than every number after them; the last number always counts (an empty list gives
    an empty list).
    """
    raise NotImplementedError
