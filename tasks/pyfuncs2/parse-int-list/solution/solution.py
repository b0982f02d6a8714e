def parse_int_list(s):
    if s.strip() == "":
        return []
    return [int(part) for part in s.split(",")]
