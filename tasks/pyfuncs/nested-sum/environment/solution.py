def nested_sum(items):
    """`items` is a list whose elements are numbers or (nested, to any depth) lists of the same
    kind. Return the sum of all the numbers.
    """
    raise NotImplementedError
