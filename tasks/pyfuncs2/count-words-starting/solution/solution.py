def count_words_starting(s, letter):
    return sum(1 for w in s.split() if w[0].lower() == letter.lower())
