def count_item(xs, item):
    """Return how many times `item` occurs in the list `xs`.
    """
    raise NotImplementedError
