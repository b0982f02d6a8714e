def hanoi_moves(n, source="A", target="C", spare="B"):
    if n == 0:
        return []
    return hanoi_moves(n - 1, source, spare, target) + [source + target] + hanoi_moves(n - 1, spare, target, source)
