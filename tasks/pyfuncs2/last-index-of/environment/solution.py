def last_index_of(xs, item):
    """Return the zero-based index of the last occurrence of `item` in the list `xs`, or
    `-1` when `item` does not occur.
    """
    raise NotImplementedError
