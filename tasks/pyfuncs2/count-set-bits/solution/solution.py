def count_set_bits(n):
    return bin(n).count("1")
