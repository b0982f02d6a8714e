def closest_value(xs, target):
    """Return the number of the non-empty list `xs` that is closest to `target`; when two
    numbers are equally close, return the smaller one.
    """
    raise NotImplementedError
