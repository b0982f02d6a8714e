import heapq


def cheapest_route(graph, start, goal):
    best = {start: 0}
    queue = [(0, start)]
    while queue:
        cost, node = heapq.heappop(queue)
        if node == goal:
            return cost
        if cost > best.get(node, cost):
            continue
        for nxt, step in graph.get(node, []):
            if cost + step < best.get(nxt, cost + step + 1):
                best[nxt] = cost + step
                heapq.heappush(queue, (cost + step, nxt))
    return -1
