def neighbour_pairs(xs):
    """Return the list of `[xs[i], xs[i + 1]]` pairs of neighbouring items of `xs`, in order
    (empty for fewer than two items).
    """
    raise NotImplementedError
