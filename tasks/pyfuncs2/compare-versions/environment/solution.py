def compare_versions(a, b):
    """Compare the dotted version strings `a` and `b` (like `'1.10.2'`) part by part as
    integers, a missing part counting as 0. Return -1 if `a` is older, 1 if newer, 0 if
    equal.
    """
    raise NotImplementedError
