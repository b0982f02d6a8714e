def running_total(nums):
    """Return the list of running totals of `nums`: element i is the sum of nums[0] .. nums[i].
    """
    raise NotImplementedError
