def running_max(xs):
    """Return a list whose item `i` is the largest of `xs[0]` ... `xs[i]`.
    """
    raise NotImplementedError
