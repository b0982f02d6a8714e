def snake_to_camel(s):
    words = s.split("_")
    return words[0] + "".join(w.capitalize() for w in words[1:])
