def flatten_dict(d, prefix=""):
    """Flatten the nested dict `d` into one level: the key of a value is the path of keys
    joined with `.` (`{'a': {'b': 1}}` gives `{'a.b': 1}`); an empty nested dict disappears;
    values that are not dicts are kept as they are.
    """
    raise NotImplementedError
