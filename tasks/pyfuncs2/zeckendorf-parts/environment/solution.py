def zeckendorf_parts(n):
    """Every positive integer is a sum of distinct, non-consecutive Fibonacci numbers from
    1, 2, 3, 5, 8, 13, ... in exactly one way. Return those numbers for `n` (`n >= 0`) as a
    list in decreasing order, found by taking the largest Fibonacci number that fits, again
    and again (100 gives `[89, 8, 3]`); 0 gives `[]`.
    """
    raise NotImplementedError
