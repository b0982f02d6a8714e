def char_classes(s):
    letters = sum(c.isalpha() for c in s)
    digits = sum(c.isdigit() for c in s)
    spaces = s.count(" ")
    return [letters, digits, spaces, len(s) - letters - digits - spaces]
