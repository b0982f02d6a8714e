def max_block_sum(m):
    rows, cols = len(m), len(m[0])
    best = None
    for top in range(rows):
        column_sums = [0] * cols
        for bottom in range(top, rows):
            for c in range(cols):
                column_sums[c] += m[bottom][c]
            for left in range(cols):
                total = 0
                for right in range(left, cols):
                    total += column_sums[right]
                    if best is None or total > best:
                        best = total
    return best
