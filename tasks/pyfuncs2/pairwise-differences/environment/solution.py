def pairwise_differences(xs):
    """Return the list of differences `xs[i + 1] - xs[i]` between each pair of neighbours in
    `xs` (empty for fewer than two items).
    """
    raise NotImplementedError
