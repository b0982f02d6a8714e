def lru_cache_run(capacity, ops):
    cache = {}
    out = []
    for op in ops:
        parts = op.split()
        key = parts[1]
        if parts[0] == "get":
            if key in cache:
                cache[key] = cache.pop(key)
                out.append(cache[key])
            else:
                out.append(-1)
        else:
            if key in cache:
                cache.pop(key)
            elif len(cache) >= capacity:
                cache.pop(next(iter(cache)))
            cache[key] = int(parts[2])
    return out
