def oldest_person(people):
    best = None
    for p in people:
        if best is None or p["age"] > best["age"]:
            best = p
    return None if best is None else best["name"]
