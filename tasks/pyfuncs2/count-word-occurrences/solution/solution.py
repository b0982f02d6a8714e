import re


def count_word_occurrences(text, word):
    return sum(1 for w in re.findall(r"[a-z]+", text.lower()) if w == word.lower())
