def catalan_number(n):
    """Return the `n`-th Catalan number (`n >= 0`): C(0) = 1 and C(n + 1) = sum of C(i) *
    C(n - i) for i from 0 to n, giving 1, 1, 2, 5, 14, 42, ... Exact integers, also for
    large `n`.
    """
    raise NotImplementedError
