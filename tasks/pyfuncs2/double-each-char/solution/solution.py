def double_each_char(s):
    result = ""
    for c in s:
        result += c + c
    return result
