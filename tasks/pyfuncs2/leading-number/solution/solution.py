def leading_number(s):
    digits = ""
    for c in s:
        if c in "0123456789":
            digits += c
        else:
            break
    if digits == "":
        return None
    return int(digits)
