def nth_ugly_number(n):
    """Ugly numbers are the positive integers with no prime factor other than 2, 3 and 5, in
    increasing order: 1, 2, 3, 4, 5, 6, 8, 9, 10, 12, ... Return the `n`-th one, counting
    from `n = 1` (which gives 1).
    """
    raise NotImplementedError
