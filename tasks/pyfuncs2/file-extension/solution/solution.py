def file_extension(name):
    dot = name.rfind(".")
    if dot <= 0:
        return ""
    return name[dot + 1:].lower()
