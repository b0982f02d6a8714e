KEYS = {"2": "abc", "3": "def", "4": "ghi", "5": "jkl", "6": "mno", "7": "pqrs", "8": "tuv", "9": "wxyz"}
DIGIT = {letter: digit for digit, letters in KEYS.items() for letter in letters}


def phone_keypad_digits(text):
    out = []
    for c in text.lower():
        if c.isdigit():
            out.append(c)
        elif c in DIGIT:
            out.append(DIGIT[c])
    return "".join(out)
