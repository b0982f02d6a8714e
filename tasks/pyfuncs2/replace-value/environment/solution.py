def replace_value(xs, old, new):
    """Return a new list like `xs` but with every item equal to `old` replaced by `new`.
    """
    raise NotImplementedError
