def flatten(lists):
    """`lists` is a list of lists. Return one list holding all their elements in order.
    """
    raise NotImplementedError
