def equal_sum_halves(xs):
    """Return `True` if the positive integers of `xs` can be shared out into two groups
    (every number in exactly one group, a group may be empty) whose sums are equal, else
    `False`; an empty list can (0 and 0).
    """
    raise NotImplementedError
