def friend_suggestions(friends, person):
    mine = set(friends.get(person, []))
    shared = {}
    for f in mine:
        for g in friends.get(f, []):
            if g != person and g not in mine:
                shared[g] = shared.get(g, 0) + 1
    return sorted(shared, key=lambda g: (-shared[g], g))
