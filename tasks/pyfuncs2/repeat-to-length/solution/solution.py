def repeat_to_length(s, n):
    return (s * (n // len(s) + 1))[:n]
