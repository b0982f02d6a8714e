def bin_counts(xs, w):
    """Put each integer of `xs` in the bin of width `w` (a positive integer) that holds it:
    the bin starting at `(x // w) * w`, so negative numbers go to negative bins. Return
    `[bin_start, count]` pairs for the bins that got numbers, by increasing `bin_start`.
    """
    raise NotImplementedError
