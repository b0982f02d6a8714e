def inorder_values(tree):
    """A binary tree is either `None` (empty) or a list `[value, left, right]` whose `left`
    and `right` are trees. Return the list of its values in in-order: the left subtree, then
    the node's own value, then the right subtree (an empty tree gives an empty list).
    """
    raise NotImplementedError
