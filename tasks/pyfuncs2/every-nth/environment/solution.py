def every_nth(xs, n):
    """Return every `n`-th item of the list `xs` starting with the first one (indexes 0, n,
    2n, ...), for a positive `n`.
    """
    raise NotImplementedError
