def edges_to_adjacency(edges):
    """`edges` lists the undirected edges of a graph as `[u, v]` pairs of node names
    (strings, `u != v`, no edge twice). Return a dict mapping every node that appears to the
    sorted list of its neighbours.
    """
    raise NotImplementedError
