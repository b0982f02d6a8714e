def tokenize_arithmetic(s):
    tokens, i = [], 0
    while i < len(s):
        c = s[i]
        if c.isdigit():
            j = i
            while j < len(s) and s[j].isdigit():
                j += 1
            tokens.append(int(s[i:j]))
            i = j
            continue
        if c in "+-*/()":
            tokens.append(c)
        i += 1
    return tokens
