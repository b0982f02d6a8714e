def remove_at(xs, i):
    """Return a new list like `xs` without the item at the zero-based index `i`; when `i` is
    not a valid index (negative, or `len(xs)` or more), return an equal copy of `xs`.
    """
    raise NotImplementedError
