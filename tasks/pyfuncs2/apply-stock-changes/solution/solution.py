def apply_stock_changes(stock, changes):
    out = dict(stock)
    for item, delta in changes:
        out[item] = out.get(item, 0) + delta
    return {k: v for k, v in out.items() if v > 0}
