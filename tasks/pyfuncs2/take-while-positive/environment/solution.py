def take_while_positive(xs):
    """Return the numbers at the start of the list `xs` up to (not including) the first
    number that is not greater than zero; all of them when every number is positive.
    """
    raise NotImplementedError
