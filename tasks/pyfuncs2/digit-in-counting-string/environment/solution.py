def digit_in_counting_string(n):
    """Write the positive integers one after another: `'123456789101112...'`. Return the
    digit (an int) at position `n` of that string, counting from 1 (`n = 11` gives 0, from
    10). `n` can be as large as 10 ** 15, so do not build the string.
    """
    raise NotImplementedError
