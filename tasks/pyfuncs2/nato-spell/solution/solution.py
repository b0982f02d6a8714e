NATO = (
    "Alfa Bravo Charlie Delta Echo Foxtrot Golf Hotel India Juliett Kilo Lima Mike November Oscar Papa "
    "Quebec Romeo Sierra Tango Uniform Victor Whiskey X-ray Yankee Zulu"
).split()


def nato_spell(word):
    return " ".join(NATO[ord(c) - ord("a")] for c in word.lower() if "a" <= c <= "z")
