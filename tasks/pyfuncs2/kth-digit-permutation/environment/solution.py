def kth_digit_permutation(n, k):
    """Among the orderings of the digits `1` to `n` (`1 <= n <= 9`) listed in increasing
    order as strings, return the `k`-th one, counting from 1 (`n = 3`: `'123'`, `'132'`,
    `'213'`, `'231'`, ... so `k = 3` gives `'213'`). `k` is between 1 and n!.
    """
    raise NotImplementedError
