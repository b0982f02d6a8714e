def sort_ignore_case(words):
    return sorted(words, key=str.lower)
