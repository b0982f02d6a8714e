def count_carries(a, b):
    carry = count = 0
    while a or b:
        carry = 1 if a % 10 + b % 10 + carry >= 10 else 0
        count += carry
        a //= 10
        b //= 10
    return count
