CODES = dict(zip(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- -..- -.-- --..".split(),
))


def morse_encode(text):
    return " / ".join(" ".join(CODES[c] for c in word) for word in text.upper().split())
