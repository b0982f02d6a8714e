def cell_totals(cells):
    done = {}

    def value(name):
        if name not in done:
            v = cells[name]
            done[name] = sum(value(n) for n in v) if isinstance(v, list) else v
        return done[name]

    return {name: value(name) for name in cells}
