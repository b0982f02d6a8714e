def reverse_bits_8(n):
    out = 0
    for _ in range(8):
        out = out << 1 | n & 1
        n >>= 1
    return out
