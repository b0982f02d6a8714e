def double_all(nums):
    """Return a new list holding every number of `nums` multiplied by 2, in the same order.
    """
    raise NotImplementedError
