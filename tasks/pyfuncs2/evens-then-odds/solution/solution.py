def evens_then_odds(xs):
    return sorted(x for x in xs if x % 2 == 0) + sorted((x for x in xs if x % 2), reverse=True)
