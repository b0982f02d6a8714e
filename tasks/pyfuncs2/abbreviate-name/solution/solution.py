def abbreviate_name(name):
    words = name.split()
    if not words:
        return ""
    return " ".join([w[0].upper() + "." for w in words[:-1]] + [words[-1]])
