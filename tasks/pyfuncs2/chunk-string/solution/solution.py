def chunk_string(s, n):
    head = len(s) % n
    pieces = [s[:head]] if head else []
    return pieces + [s[i:i + n] for i in range(head, len(s), n)]
