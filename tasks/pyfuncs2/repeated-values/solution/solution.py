def repeated_values(xs):
    seen = set()
    repeated = set()
    for x in xs:
        if x in seen:
            repeated.add(x)
        seen.add(x)
    return sorted(repeated)
