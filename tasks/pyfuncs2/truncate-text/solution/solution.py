def truncate_text(s, n):
    if len(s) <= n:
        return s
    return s[: n - 3] + "..."
