def count_ones_written(n):
    """Return how many times the digit 1 is written when all the integers from 1 to `n` are
    written in decimal (`n = 13` gives 6: in 1, 10, 11 (twice), 12, 13). `n` may be 0
    (giving 0) or as large as 10 ** 12, so count per digit position instead of writing the
    numbers.
    """
    raise NotImplementedError
