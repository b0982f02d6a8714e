POINTS = {}
for letters, value in (("aeioulnstr", 1), ("dg", 2), ("bcmp", 3), ("fhvwy", 4), ("k", 5), ("jx", 8), ("qz", 10)):
    for letter in letters:
        POINTS[letter] = value


def scrabble_score(word):
    return sum(POINTS.get(c, 0) for c in word.lower())
