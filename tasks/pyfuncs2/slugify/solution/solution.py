def slugify(title):
    out = ""
    for c in title.lower():
        if c.isascii() and c.isalnum():
            out += c
        elif out and out[-1] != "-":
            out += "-"
    return out.strip("-")
