def is_two_colourable(n, edges):
    """An undirected graph has nodes `0 .. n-1` and the edges `[u, v]` of `edges` (`u !=
    v`). Return `True` if every node can be given one of two colours so that every edge
    joins nodes of different colours (the graph may have several separate parts), else
    `False`.
    """
    raise NotImplementedError
