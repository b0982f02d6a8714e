def evaluate_expression(s):
    total, sign, num, stack = 0, 1, 0, []
    for c in s:
        if c.isdigit():
            num = num * 10 + int(c)
        elif c in "+-":
            total += sign * num
            num, sign = 0, (1 if c == "+" else -1)
        elif c == "(":
            stack.append((total, sign))
            total, sign = 0, 1
        elif c == ")":
            total += sign * num
            num = 0
            prev_total, prev_sign = stack.pop()
            total = prev_total + prev_sign * total
    return total + sign * num
