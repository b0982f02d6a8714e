def keep_multiples(xs, k):
    """Return, in their original order, the integers of `xs` that are multiples of the
    positive integer `k` (0 is a multiple of every `k`).
    """
    raise NotImplementedError
