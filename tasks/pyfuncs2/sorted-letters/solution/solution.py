def sorted_letters(s):
    return "".join(sorted(s))
