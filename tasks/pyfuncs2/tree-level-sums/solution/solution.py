def tree_level_sums(node):
    sums = []
    level = [node]
    while level:
        sums.append(sum(n["value"] for n in level))
        level = [c for n in level for c in n["children"]]
    return sums
