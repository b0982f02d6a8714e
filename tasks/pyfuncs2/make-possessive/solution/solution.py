def make_possessive(name):
    return name + "'" if name[-1] in "sS" else name + "'s"
