def base_convert(n, b):
    digits = "0123456789abcdef"
    if n == 0:
        return "0"
    out = ""
    while n:
        out = digits[n % b] + out
        n //= b
    return out
