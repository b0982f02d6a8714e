def can_reach_node(graph, start, goal):
    """`graph` maps each node name to the list of nodes its one-way edges lead to (a node
    may be missing as a key, then it has no edges). Return `True` if `goal` can be reached
    from `start` by following edges; a node reaches itself.
    """
    raise NotImplementedError
