def is_valid_isbn10(isbn):
    s = isbn.replace("-", "")
    if len(s) != 10 or not s[:9].isdigit() or not s[:9].isascii():
        return False
    if s[9] == "X":
        last = 10
    elif s[9] in "0123456789":
        last = int(s[9])
    else:
        return False
    total = sum(int(c) * (10 - i) for i, c in enumerate(s[:9])) + last
    return total % 11 == 0
