def is_subsequence_list(sub, xs):
    """Return `True` if the items of the list `sub` appear in the list `xs` in the same
    order, not necessarily next to each other (each item of `xs` used at most once); an
    empty `sub` always does.
    """
    raise NotImplementedError
