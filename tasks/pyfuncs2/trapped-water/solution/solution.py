def trapped_water(heights):
    total = 0
    for i, h in enumerate(heights):
        level = min(max(heights[: i + 1]), max(heights[i:]))
        total += level - h
    return total
