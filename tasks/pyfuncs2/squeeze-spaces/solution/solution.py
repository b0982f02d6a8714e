def squeeze_spaces(s):
    out = ""
    for c in s:
        if c == " " and out.endswith(" "):
            continue
        out += c
    return out.strip(" ")
