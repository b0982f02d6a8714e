def count_components(n, edges):
    """The undirected graph has nodes `0 .. n-1` and the edges `[u, v]` in `edges`. Return
    how many connected components it has.
    """
    raise NotImplementedError
