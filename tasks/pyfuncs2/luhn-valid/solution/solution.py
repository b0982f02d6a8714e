def luhn_valid(number):
    digits = number.replace(" ", "")
    if len(digits) < 2 or not all(c in "0123456789" for c in digits):
        return False
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0
