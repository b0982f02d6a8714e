def paths_with_sum(node, target):
    value = node["value"]
    if not node["children"]:
        return [[value]] if value == target else []
    out = []
    for child in node["children"]:
        for path in paths_with_sum(child, target - value):
            out.append([value] + path)
    return out
