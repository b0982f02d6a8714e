def topological_order(deps):
    waiting = {k: set(v) for k, v in deps.items()}
    order = []
    while waiting:
        ready = sorted(k for k, v in waiting.items() if not v)
        if not ready:
            return None
        first = ready[0]
        order.append(first)
        del waiting[first]
        for v in waiting.values():
            v.discard(first)
    return order
