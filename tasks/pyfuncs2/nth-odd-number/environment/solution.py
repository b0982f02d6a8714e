def nth_odd_number(n):
    """Return the `n`-th positive odd number for a positive integer `n`: the first is 1, the
    second 3, the third 5.
    """
    raise NotImplementedError
