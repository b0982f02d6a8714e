def double_all(nums):
    return [n * 2 for n in nums]
