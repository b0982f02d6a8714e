def spell_digits(s):
    names = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    return " ".join(names[int(c)] for c in s)
