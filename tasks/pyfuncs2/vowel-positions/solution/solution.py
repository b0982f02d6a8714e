def vowel_positions(s):
    return [i for i, c in enumerate(s) if c.lower() in "aeiou"]
