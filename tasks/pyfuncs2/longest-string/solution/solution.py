def longest_string(words):
    return max(words, key=len)
