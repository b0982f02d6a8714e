def derangements(n):
    """Return the number of derangements of `n` items (`n >= 0`): orderings in which no item
    stays in its original place. D(0) = 1, D(1) = 0, and D(n) = (n - 1) * (D(n - 1) + D(n -
    2)); D(4) = 9.
    """
    raise NotImplementedError
