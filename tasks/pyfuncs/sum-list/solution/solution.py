def sum_list(nums):
    total = 0
    for n in nums:
        total += n
    return total
