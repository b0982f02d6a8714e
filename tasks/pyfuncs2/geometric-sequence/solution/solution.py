def geometric_sequence(start, ratio, n):
    terms = []
    value = start
    for _ in range(n):
        terms.append(value)
        value *= ratio
    return terms
