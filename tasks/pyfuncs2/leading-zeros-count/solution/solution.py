def leading_zeros_count(s):
    return len(s) - len(s.lstrip("0"))
