def count_word_occurrences(text, word):
    """Return how many times the word `word` occurs in the string `text` as a whole word,
    ignoring case: words are the maximal runs of letters a-z (either case), so `'cat'` is
    not counted inside `'category'` but is counted in `'Cat,'`.
    """
    raise NotImplementedError
