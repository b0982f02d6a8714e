def occurrence_number(xs):
    """Return a list of the same length as `xs` whose item `i` says how many times `xs[i]`
    has occurred in `xs[0]` ... `xs[i]` (itself included): `['a', 'b', 'a']` gives `[1, 1,
    2]`.
    """
    raise NotImplementedError
