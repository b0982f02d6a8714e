def split_even_odd(xs):
    """Return a list of two lists: the even integers of `xs` and the odd ones, each in their
    original order.
    """
    raise NotImplementedError
