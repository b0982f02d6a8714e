def sort_by_given_order(xs, order):
    rank = {}
    for i, v in enumerate(order):
        rank.setdefault(v, i)
    known = sorted((x for x in xs if x in rank), key=lambda x: rank[x])
    return known + [x for x in xs if x not in rank]
