def a_or_an(word):
    return ("an " if word[0].lower() in "aeiou" else "a ") + word
