def is_two_colourable(n, edges):
    adj = [[] for _ in range(n)]
    for u, v in edges:
        adj[u].append(v)
        adj[v].append(u)
    colour = [None] * n
    for s in range(n):
        if colour[s] is not None:
            continue
        colour[s] = 0
        todo = [s]
        while todo:
            u = todo.pop()
            for v in adj[u]:
                if colour[v] is None:
                    colour[v] = 1 - colour[u]
                    todo.append(v)
                elif colour[v] == colour[u]:
                    return False
    return True
