def even_index_sum(xs):
    """Return the sum of the items of `xs` at even indexes (0, 2, 4, ...); 0 for an empty
    list.
    """
    raise NotImplementedError
