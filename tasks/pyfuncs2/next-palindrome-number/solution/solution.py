def next_palindrome_number(n):
    s = str(n + 1)
    k = len(s)
    half = s[: (k + 1) // 2]
    candidate = int(half + half[: k // 2][::-1])
    if candidate >= n + 1:
        return candidate
    half = str(int(half) + 1)
    if len(half) > (k + 1) // 2:
        return 10 ** k + 1
    return int(half + half[: k // 2][::-1])
