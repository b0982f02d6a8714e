def file_extension(name):
    """Return the extension of the file name `name`: the part after the last `.`, in lower
    case, or `''` when there is no dot or the name only starts with one (`'.bashrc'`).
    """
    raise NotImplementedError
