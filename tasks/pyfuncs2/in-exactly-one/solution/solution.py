def in_exactly_one(a, b):
    return [v for v in sorted(set(a) | set(b)) if (v in a) != (v in b)]
