def find_substring(s, sub):
    return s.find(sub)
