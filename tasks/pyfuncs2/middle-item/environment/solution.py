def middle_item(xs):
    """Return the middle item of the list `xs`: the item at index `len(xs) // 2` (so for an
    even length, the later of the two middle items). Return `None` for an empty list.
    """
    raise NotImplementedError
