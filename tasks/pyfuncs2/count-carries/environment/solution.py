def count_carries(a, b):
    """Return how many carry operations happen when the non-negative integers `a` and `b`
    are added digit by digit in decimal, from the right, the way it is done on paper (a
    carry can cause another: 999 + 1 has 3 carries).
    """
    raise NotImplementedError
