def cheapest_route(graph, start, goal):
    """`graph` maps each node name to a list of `[next_node, cost]` one-way roads with non-
    negative integer costs (a node may be missing as a key: no roads leave it). Return the
    smallest total cost of a route from `start` to `goal`, 0 when they are the same node, or
    -1 when `goal` cannot be reached.
    """
    raise NotImplementedError
