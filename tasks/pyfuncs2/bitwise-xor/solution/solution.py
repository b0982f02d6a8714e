def bitwise_xor(a, b):
    return a ^ b
