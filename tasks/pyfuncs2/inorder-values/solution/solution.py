def inorder_values(tree):
    if tree is None:
        return []
    value, left, right = tree
    return inorder_values(left) + [value] + inorder_values(right)
