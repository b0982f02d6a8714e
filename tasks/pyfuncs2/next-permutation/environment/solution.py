def next_permutation(xs):
    """Return the next arrangement of the list `xs` in lexicographic order; if `xs` is
    already the last (descending), return it sorted ascending.
    """
    raise NotImplementedError
