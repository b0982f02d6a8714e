def paths_with_sum(node, target):
    """A tree node is a dict `{'value': n, 'children': [...]}` with a number `n` and child
    nodes of the same kind. Return every path from the root `node` down to a leaf (a node
    without children) whose values add up to `target`, each as the list of its values, from
    the leftmost path to the rightmost.
    """
    raise NotImplementedError
