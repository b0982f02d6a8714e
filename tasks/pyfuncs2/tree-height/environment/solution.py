def tree_height(node):
    """A tree node is a dict `{'value': ..., 'children': [...]}` whose children are nodes of
    the same kind. Return the height of the tree rooted at `node`: the number of nodes on
    its longest path from the root down to a leaf (1 for a node without children).
    """
    raise NotImplementedError
