def swap_ends(xs):
    """Return a new list like `xs` but with its first and last items exchanged; a list with
    fewer than two items is returned unchanged.
    """
    raise NotImplementedError
