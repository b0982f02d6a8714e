def next_palindrome_number(n):
    """Return the smallest integer strictly greater than the non-negative integer `n` whose
    decimal digits read the same forwards and backwards (`123` gives 131, `99` gives 101,
    `808` gives 818). It must be fast for numbers with dozens of digits, so do not count up
    one by one.
    """
    raise NotImplementedError
