def unflatten_dict(d):
    """Turn the dict `d` whose keys are dotted paths (`'a.b.c'`) into a nested dict (`{'a':
    {'b': {'c': ...}}}`); keys are processed in sorted order, and no key is both a value and
    a parent.
    """
    raise NotImplementedError
