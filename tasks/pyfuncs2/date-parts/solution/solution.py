def date_parts(s):
    return [int(part) for part in s.split("-")]
