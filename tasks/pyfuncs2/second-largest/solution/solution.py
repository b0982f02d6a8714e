def second_largest(xs):
    values = sorted(set(xs), reverse=True)
    if len(values) < 2:
        return None
    return values[1]
