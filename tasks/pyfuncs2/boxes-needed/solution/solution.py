def boxes_needed(items, per_box):
    return (items + per_box - 1) // per_box
