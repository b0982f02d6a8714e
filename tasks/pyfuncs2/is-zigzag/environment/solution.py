def is_zigzag(xs):
    """Return `True` if the numbers of `xs` alternately go up and down (or down and up)
    between neighbours, strictly each time: `1, 3, 2, 4` does, `1, 3, 5` does not, and an
    equal neighbour breaks it. Lists of fewer than two numbers do; two different numbers do.
    """
    raise NotImplementedError
