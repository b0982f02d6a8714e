def bit_length(n):
    return n.bit_length()
