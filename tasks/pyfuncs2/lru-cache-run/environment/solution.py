def lru_cache_run(capacity, ops):
    """Simulate a cache holding at most `capacity` (at least 1) keys. `ops` holds `'put K
    V'` (store integer V under key K) and `'get K'`. Both use the key, making it the most
    recently used; a `put` of a new key into a full cache first removes the least recently
    used key. Return the list of what each `get` read: the value, or -1 when the key is not
    in the cache.
    """
    raise NotImplementedError
