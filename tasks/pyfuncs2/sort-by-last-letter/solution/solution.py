def sort_by_last_letter(words):
    return sorted(words, key=lambda w: w[-1])
