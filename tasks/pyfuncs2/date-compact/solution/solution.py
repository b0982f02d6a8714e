def date_compact(s):
    return s.replace("-", "")
