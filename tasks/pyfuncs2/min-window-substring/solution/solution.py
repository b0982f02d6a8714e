from collections import Counter


def min_window_substring(s, t):
    if not t:
        return ""
    need = Counter(t)
    missing = len(t)
    best = (0, 0)
    left = 0
    for right, c in enumerate(s, 1):
        if need[c] > 0:
            missing -= 1
        need[c] -= 1
        if missing == 0:
            while need[s[left]] < 0:
                need[s[left]] += 1
                left += 1
            if best == (0, 0) or right - left < best[1] - best[0]:
                best = (left, right)
            need[s[left]] += 1
            missing += 1
            left += 1
    return s[best[0] : best[1]]
