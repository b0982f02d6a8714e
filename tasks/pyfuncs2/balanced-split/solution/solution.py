def balanced_split(s):
    count = balance = 0
    for c in s:
        balance += 1 if c == "L" else -1
        if balance == 0:
            count += 1
    return count if balance == 0 else 0
