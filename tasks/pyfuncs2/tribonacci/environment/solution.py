def tribonacci(n):
    """Return the `n`-th Tribonacci number (`n >= 0`), where the sequence starts 0, 0, 1
    (indices 0, 1, 2) and every later term is the sum of the three terms before it: 0, 0, 1,
    1, 2, 4, 7, 13, ...
    """
    raise NotImplementedError
