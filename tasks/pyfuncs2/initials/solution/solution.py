def initials(name):
    return "".join(w[0].upper() + "." for w in name.split())
