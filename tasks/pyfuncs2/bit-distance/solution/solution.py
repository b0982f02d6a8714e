def bit_distance(a, b):
    return bin(a ^ b).count("1")
