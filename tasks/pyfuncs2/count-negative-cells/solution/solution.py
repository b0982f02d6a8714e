def count_negative_cells(m):
    count = 0
    for row in m:
        for x in row:
            if x < 0:
                count += 1
    return count
