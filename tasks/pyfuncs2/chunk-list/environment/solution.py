def chunk_list(xs, n):
    """Cut the list `xs` into consecutive pieces of `n` items each (`n` is positive), from
    the start; the last piece may be shorter. Return the list of pieces (empty for an empty
    `xs`).
    """
    raise NotImplementedError
