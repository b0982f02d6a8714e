def title_words(text):
    return ' '.join(w.capitalize() for w in text.split())
