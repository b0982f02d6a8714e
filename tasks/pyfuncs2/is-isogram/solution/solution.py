def is_isogram(s):
    letters = [c.lower() for c in s if c not in " -"]
    return len(letters) == len(set(letters))
