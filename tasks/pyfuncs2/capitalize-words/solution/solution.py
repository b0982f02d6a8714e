def capitalize_words(s):
    return " ".join(w[:1].upper() + w[1:] for w in s.split(" "))
