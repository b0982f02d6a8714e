def nested_dict_sum(d):
    """The dict `d` maps strings to numbers or to dicts of the same kind, nested to any
    depth. Return the sum of all numbers in it.
    """
    raise NotImplementedError
