def factorial(n):
    out = 1
    for i in range(2, n + 1):
        out *= i
    return out
