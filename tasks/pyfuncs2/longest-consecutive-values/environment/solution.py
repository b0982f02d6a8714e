def longest_consecutive_values(xs):
    """Return the length of the longest sequence of consecutive integers (`v, v + 1, v + 2,
    ...`) whose every value occurs somewhere in the integer list `xs`, in any order;
    duplicates count once (0 for an empty list).
    """
    raise NotImplementedError
