def multiply_digit_strings(a, b):
    result = [0] * (len(a) + len(b))
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            total = result[i + j + 1] + int(a[i]) * int(b[j])
            result[i + j + 1] = total % 10
            result[i + j] += total // 10
    return "".join(map(str, result)).lstrip("0") or "0"
