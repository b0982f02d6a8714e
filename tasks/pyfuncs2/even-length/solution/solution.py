def even_length(s):
    return len(s) % 2 == 0
