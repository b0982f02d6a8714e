def run_length_pairs(xs):
    """Return the runs of equal neighbouring items of `xs` as a list of `[item, count]`
    pairs, in order.
    """
    raise NotImplementedError
