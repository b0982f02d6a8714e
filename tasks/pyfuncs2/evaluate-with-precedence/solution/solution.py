def evaluate_with_precedence(s):
    stack, num, op = [], 0, "+"
    for c in s + "+":
        if c.isdigit():
            num = num * 10 + int(c)
        elif c in "+-*/":
            if op == "+":
                stack.append(num)
            elif op == "-":
                stack.append(-num)
            elif op == "*":
                stack.append(stack.pop() * num)
            else:
                stack.append(int(stack.pop() / num))
            op, num = c, 0
    return sum(stack)
