def chunks(items, size):
    """Split the list `items` into consecutive chunks of length `size` (an integer >= 1) and
    return the list of chunks; the last chunk may be shorter.
    """
    raise NotImplementedError
