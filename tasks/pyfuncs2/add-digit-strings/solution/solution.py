def add_digit_strings(a, b):
    i, j = len(a) - 1, len(b) - 1
    carry = 0
    out = []
    while i >= 0 or j >= 0 or carry:
        total = carry + (int(a[i]) if i >= 0 else 0) + (int(b[j]) if j >= 0 else 0)
        out.append(str(total % 10))
        carry = total // 10
        i -= 1
        j -= 1
    return "".join(reversed(out)).lstrip("0") or "0"
