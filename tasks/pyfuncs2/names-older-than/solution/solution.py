def names_older_than(people, age):
    return [p["name"] for p in people if p["age"] > age]
