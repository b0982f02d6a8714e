def drop_repeated_words(text):
    out = []
    for word in text.split():
        if not out or out[-1].lower() != word.lower():
            out.append(word)
    return " ".join(out)
