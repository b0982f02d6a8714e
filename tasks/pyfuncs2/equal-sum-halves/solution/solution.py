def equal_sum_halves(xs):
    total = sum(xs)
    if total % 2:
        return False
    reachable = {0}
    for x in xs:
        reachable |= {s + x for s in reachable}
    return total // 2 in reachable
