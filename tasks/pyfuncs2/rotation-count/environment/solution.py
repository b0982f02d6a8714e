def rotation_count(xs):
    """The list `xs` of distinct numbers was sorted ascending and then rotated right by some
    number of places (items moved from the end to the front). Return that number of places,
    between 0 and `len(xs) - 1` (0 for an empty list or one still sorted).
    """
    raise NotImplementedError
