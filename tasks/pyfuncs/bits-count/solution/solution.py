def count_bits(n):
    return bin(n).count('1')
