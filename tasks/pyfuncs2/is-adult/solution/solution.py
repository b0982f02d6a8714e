def is_adult(person):
    return person["age"] >= 18
