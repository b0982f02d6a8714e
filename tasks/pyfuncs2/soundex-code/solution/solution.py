CODE = {}
for letters, digit in (("bfpv", "1"), ("cgjkqsxz", "2"), ("dt", "3"), ("l", "4"), ("mn", "5"), ("r", "6")):
    for letter in letters:
        CODE[letter] = digit


def soundex_code(name):
    name = name.lower()
    out = name[0].upper()
    previous = CODE.get(name[0], "")
    for c in name[1:]:
        digit = CODE.get(c, "")
        if digit and digit != previous:
            out += digit
        if c not in "hw":
            previous = digit
    return (out + "000")[:4]
