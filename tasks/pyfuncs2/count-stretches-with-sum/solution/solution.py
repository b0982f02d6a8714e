def count_stretches_with_sum(xs, target):
    count = 0
    for i in range(len(xs)):
        total = 0
        for j in range(i, len(xs)):
            total += xs[j]
            if total == target:
                count += 1
    return count
