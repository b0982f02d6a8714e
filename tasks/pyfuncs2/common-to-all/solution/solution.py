def common_to_all(groups):
    if not groups:
        return []
    shared = set(groups[0])
    for g in groups[1:]:
        shared &= set(g)
    return sorted(shared)
