def index_of_max(xs):
    """Return the index of the largest number in the list `xs` (the first one when it occurs
    more than once), or `-1` for an empty list.
    """
    raise NotImplementedError
