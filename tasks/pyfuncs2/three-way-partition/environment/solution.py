def three_way_partition(xs, pivot):
    """Return a new list holding first the numbers of `xs` smaller than `pivot`, then those
    equal to it, then those larger, each group keeping its original order (the groups are
    not sorted).
    """
    raise NotImplementedError
