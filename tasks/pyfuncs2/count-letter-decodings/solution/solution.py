def count_letter_decodings(s):
    previous, current = 1, 1
    for i in range(len(s)):
        ways = current if s[i] != "0" else 0
        if i > 0 and s[i - 1] != "0" and 10 <= int(s[i - 1 : i + 1]) <= 26:
            ways += previous
        previous, current = current, ways
    return current
