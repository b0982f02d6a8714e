def circuit_start(fuel, cost):
    n = len(fuel)
    for start in range(n):
        tank = 0
        for k in range(n):
            i = (start + k) % n
            tank += fuel[i] - cost[i]
            if tank < 0:
                break
        else:
            return start
    return -1
