def second_largest(nums):
    """Return the second largest distinct value of the list `nums`. Return `None` when there
    are fewer than two distinct values.
    """
    raise NotImplementedError
