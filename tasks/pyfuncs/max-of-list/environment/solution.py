def max_of_list(nums):
    """Return the largest number in the list `nums`. Return `None` when the list is empty.
    """
    raise NotImplementedError
