def argsort(xs):
    """Return the list of indexes of `xs` ordered so that the values at them go from
    smallest to largest; for equal values the smaller index comes first.
    """
    raise NotImplementedError
