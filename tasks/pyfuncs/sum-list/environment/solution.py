def sum_list(nums):
    """Return the sum of the numbers in the list `nums` (0 for an empty list).
    """
    raise NotImplementedError
