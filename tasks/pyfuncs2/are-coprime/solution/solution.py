def are_coprime(a, b):
    while b:
        a, b = b, a % b
    return a == 1
