def nth_word(s, n):
    """Return the `n`-th word of the string `s`, counting from 1, where words are separated
    by whitespace. Return the empty string if `s` has fewer than `n` words or `n` is less
    than 1.
    """
    raise NotImplementedError
