def atbash(s):
    out = ""
    for c in s:
        if "a" <= c <= "z":
            out += chr(ord("z") - (ord(c) - ord("a")))
        elif "A" <= c <= "Z":
            out += chr(ord("Z") - (ord(c) - ord("A")))
        else:
            out += c
    return out
