def translate_words(words, table):
    return [table.get(w, w) for w in words]
