def dense_rank(xs):
    ranks = {v: i + 1 for i, v in enumerate(sorted(set(xs)))}
    return [ranks[x] for x in xs]
