def edges_to_adjacency(edges):
    adj = {}
    for u, v in edges:
        adj.setdefault(u, []).append(v)
        adj.setdefault(v, []).append(u)
    return {node: sorted(ns) for node, ns in adj.items()}
