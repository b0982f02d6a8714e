def merge_shared_groups(groups):
    merged = []
    for g in groups:
        if not g:
            continue
        members = set(g)
        rest = []
        for m in merged:
            if m & members:
                members |= m
            else:
                rest.append(m)
        merged = rest + [members]
    return sorted(sorted(m) for m in merged)
