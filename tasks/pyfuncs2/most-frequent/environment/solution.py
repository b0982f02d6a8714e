def most_frequent(xs):
    """Return the value that occurs most often in the non-empty list `xs`; on a tie, the one
    that appears first.
    """
    raise NotImplementedError
