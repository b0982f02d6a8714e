def max_of_list(nums):
    return max(nums) if nums else None
