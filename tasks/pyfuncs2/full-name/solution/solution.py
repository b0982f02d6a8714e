def full_name(person):
    return person["first"] + " " + person["last"]
