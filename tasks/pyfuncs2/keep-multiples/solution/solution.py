def keep_multiples(xs, k):
    return [x for x in xs if x % k == 0]
