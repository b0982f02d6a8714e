def two_sum_indices(xs, target):
    """Return `[i, j]` with `i < j` such that `xs[i] + xs[j] == target`, choosing the pair
    with the smallest `j`, and for that `j` the smallest `i`; return `[]` if there is none.
    """
    raise NotImplementedError
