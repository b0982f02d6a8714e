def geometric_sequence(start, ratio, n):
    """Return a list of the first `n` terms of the geometric sequence that starts at `start`
    and is multiplied by `ratio` at each step (`1, 2, 5` gives `[1, 2, 4, 8, 16]`); `[]`
    when `n` is 0.
    """
    raise NotImplementedError
