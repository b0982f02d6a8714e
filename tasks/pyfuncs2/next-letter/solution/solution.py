def next_letter(s):
    result = ""
    for c in s:
        if c == "z":
            result += "a"
        elif "a" <= c <= "y":
            result += chr(ord(c) + 1)
        else:
            result += c
    return result
