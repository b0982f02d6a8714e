def is_palindrome_list(xs):
    """Return `True` if the list `xs` is the same when read from the end to the start (an
    empty list is).
    """
    raise NotImplementedError
