def is_mountain(xs):
    """Return `True` if the list `xs` strictly rises to one peak and then strictly falls: at
    least three numbers, the peak neither first nor last, no two neighbours equal. Otherwise
    `False`.
    """
    raise NotImplementedError
