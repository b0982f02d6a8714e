def shortest_stretch_at_least(xs, target):
    best = 0
    total = 0
    left = 0
    for right, x in enumerate(xs):
        total += x
        while total >= target:
            length = right - left + 1
            if best == 0 or length < best:
                best = length
            total -= xs[left]
            left += 1
    return best
