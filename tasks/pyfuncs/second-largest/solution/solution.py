def second_largest(nums):
    values = sorted(set(nums), reverse=True)
    return values[1] if len(values) > 1 else None
