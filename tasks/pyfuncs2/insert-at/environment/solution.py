def insert_at(xs, i, item):
    """Return a new list like `xs` with `item` inserted so that it ends up at index `i` (`0
    <= i <= len(xs)`; `i = len(xs)` puts it at the end). The input list is not changed.
    """
    raise NotImplementedError
