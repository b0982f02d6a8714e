def keys_by_value_desc(d):
    """Return the keys of the dict `d` (numeric values) ordered from the largest value to
    the smallest; keys with equal values come in ascending key order.
    """
    raise NotImplementedError
