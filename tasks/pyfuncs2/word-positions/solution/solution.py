def word_positions(text):
    out = {}
    for i, w in enumerate(text.lower().split()):
        out.setdefault(w, []).append(i)
    return out
