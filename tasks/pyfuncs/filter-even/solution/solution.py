def evens(nums):
    return [n for n in nums if n % 2 == 0]
