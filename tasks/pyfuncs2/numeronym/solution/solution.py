def numeronym(word):
    if len(word) < 4:
        return word
    return word[0] + str(len(word) - 2) + word[-1]
