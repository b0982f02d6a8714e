def moving_average(nums, k):
    return [sum(nums[i:i + k]) / k for i in range(len(nums) - k + 1)]
