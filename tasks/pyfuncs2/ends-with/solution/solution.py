def ends_with(s, suffix):
    return s.endswith(suffix)
