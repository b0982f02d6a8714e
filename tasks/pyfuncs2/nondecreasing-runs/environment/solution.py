def nondecreasing_runs(xs):
    """Cut the number list `xs` into the fewest pieces of neighbouring items such that
    inside each piece no number is smaller than the one before it. Return the pieces in
    order (an empty list gives an empty list).
    """
    raise NotImplementedError
