def tree_height(node):
    return 1 + max((tree_height(child) for child in node["children"]), default=0)
