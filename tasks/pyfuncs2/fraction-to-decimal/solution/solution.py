def fraction_to_decimal(num, den):
    sign = "-" if (num < 0) != (den < 0) and num != 0 else ""
    num, den = abs(num), abs(den)
    whole, rest = divmod(num, den)
    if rest == 0:
        return sign + str(whole)
    digits = []
    seen = {}
    while rest and rest not in seen:
        seen[rest] = len(digits)
        rest *= 10
        digits.append(str(rest // den))
        rest %= den
    if rest:
        i = seen[rest]
        fraction = "".join(digits[:i]) + "(" + "".join(digits[i:]) + ")"
    else:
        fraction = "".join(digits)
    return f"{sign}{whole}.{fraction}"
