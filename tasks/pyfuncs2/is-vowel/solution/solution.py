def is_vowel(c):
    return c.lower() in ("a", "e", "i", "o", "u")
