def next_greater(xs):
    """Return a list of the same length as `xs` whose item `i` is the first number after
    position `i` that is strictly greater than `xs[i]`, or `None` when no later number is.
    """
    raise NotImplementedError
