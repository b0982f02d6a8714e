def select_by_mask(xs, mask):
    return [x for x, keep in zip(xs, mask) if keep]
