def find_sublist(xs, sub):
    """Return the smallest index `i` at which the list `sub` occurs in the list `xs` as a
    run of neighbouring items (`xs[i:i + len(sub)] == sub`), or `-1` when it does not occur;
    an empty `sub` occurs at 0.
    """
    raise NotImplementedError
