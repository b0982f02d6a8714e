def tree_level_sums(node):
    """A tree node is a dict `{'value': n, 'children': [...]}` with a number `n` and child
    nodes of the same kind. Return the list whose item `d` is the sum of the values of all
    nodes at depth `d` (the root is at depth 0).
    """
    raise NotImplementedError
