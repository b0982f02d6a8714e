def ends_with_punctuation(s):
    s = s.rstrip()
    return s != "" and s[-1] in ".!?"
