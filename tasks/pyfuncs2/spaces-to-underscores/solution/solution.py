def spaces_to_underscores(s):
    return s.replace(" ", "_")
