def majority_element(xs):
    """Return the value that occupies strictly more than half of the positions of the list
    `xs`, or `None` when no value does (exactly half is not enough; an empty list has none).
    """
    raise NotImplementedError
