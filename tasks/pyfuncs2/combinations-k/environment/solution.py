def combinations_k(xs, k):
    """Return every combination of `k` items of the list `xs` (items are distinct), each as
    a list in the order the items have in `xs`, the combinations listed in lexicographic
    order of their positions.
    """
    raise NotImplementedError
