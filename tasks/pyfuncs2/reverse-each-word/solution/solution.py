def reverse_each_word(s):
    return " ".join(word[::-1] for word in s.split(" "))
