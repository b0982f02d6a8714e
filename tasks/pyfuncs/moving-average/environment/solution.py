def moving_average(nums, k):
    """Return the list of averages of every window of `k` consecutive numbers of `nums` (as
    floats), from left to right. When `k` is larger than the list, return [].
    """
    raise NotImplementedError
