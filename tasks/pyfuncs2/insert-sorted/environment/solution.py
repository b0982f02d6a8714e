def insert_sorted(xs, value):
    """`xs` is sorted ascending. Return a new sorted list with `value` inserted after any
    items equal to it; do not call `sort` or `sorted`.
    """
    raise NotImplementedError
