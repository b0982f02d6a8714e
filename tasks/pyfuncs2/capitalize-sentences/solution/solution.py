def capitalize_sentences(text):
    out = []
    start = True
    for c in text:
        if start and c.isalpha():
            out.append(c.upper())
            start = False
        else:
            out.append(c)
        if c in ".!?":
            start = True
    return "".join(out)
