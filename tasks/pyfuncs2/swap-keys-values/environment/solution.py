def swap_keys_values(d):
    """The dict `d` has string values, all different. Return a new dict in which each value
    of `d` is a key that maps to its old key (an empty dict for an empty `d`).
    """
    raise NotImplementedError
