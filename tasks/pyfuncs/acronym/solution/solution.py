def acronym(phrase):
    words = phrase.replace('-', ' ').split()
    return ''.join(w[0].upper() for w in words)
