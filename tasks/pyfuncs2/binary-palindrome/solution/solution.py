def binary_palindrome(n):
    digits = bin(n)[2:]
    return digits == digits[::-1]
