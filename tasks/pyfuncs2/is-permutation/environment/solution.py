def is_permutation(xs):
    """Return `True` if the integer list `xs` holds each of the numbers 1 to `len(xs)`
    exactly once, in any order (an empty list does).
    """
    raise NotImplementedError
