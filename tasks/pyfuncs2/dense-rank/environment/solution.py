def dense_rank(xs):
    """Return a list of the same length as `xs` giving each number's rank among the distinct
    values of `xs`: 1 for the smallest value, 2 for the next distinct value, and so on;
    equal numbers share a rank with no gaps.
    """
    raise NotImplementedError
