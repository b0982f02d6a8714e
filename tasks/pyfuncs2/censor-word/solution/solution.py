def censor_word(s, word):
    return s.replace(word, "*" * len(word))
