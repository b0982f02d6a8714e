def boxes_needed(items, per_box):
    """Return how many boxes are needed to pack `items` items (a non-negative integer) when
    one box holds `per_box` items; a box that is only partly filled still counts as one box.
    """
    raise NotImplementedError
