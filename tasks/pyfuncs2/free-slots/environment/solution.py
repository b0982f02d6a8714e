def free_slots(busy, day_start, day_end):
    """`busy` is a list of `[start, end]` times (`start < end`, in any order, possibly
    overlapping or reaching outside the day), each busy from `start` up to `end`. Return the
    free stretches of the day from `day_start` to `day_end` as `[start, end]` pairs, in
    order, leaving out empty ones: two busy times that touch leave no gap.
    """
    raise NotImplementedError
