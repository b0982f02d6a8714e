def shortest_stretch_at_least(xs, target):
    """`xs` is a list of positive integers and `target` a positive integer. Return the
    length of the shortest stretch of neighbouring items whose sum is at least `target`, or
    0 when even the whole list falls short.
    """
    raise NotImplementedError
