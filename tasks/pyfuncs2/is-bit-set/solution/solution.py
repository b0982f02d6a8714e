def is_bit_set(n, i):
    return (n >> i) & 1 == 1
