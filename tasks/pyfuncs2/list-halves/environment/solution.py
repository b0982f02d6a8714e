def list_halves(xs):
    """Return `[front, back]`: the list `xs` cut in two, where `front` holds the first
    `len(xs) // 2` items and `back` the rest (so for an odd length the back half is one item
    longer).
    """
    raise NotImplementedError
