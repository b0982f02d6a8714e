def longest_repeated_substring(s):
    for length in range(len(s) - 1, 0, -1):
        seen = set()
        first = None
        for i in range(len(s) - length + 1):
            part = s[i : i + length]
            if part in seen:
                candidate = s.find(part)
                if first is None or candidate < first:
                    first = candidate
            seen.add(part)
        if first is not None:
            return s[first : first + length]
    return ""
