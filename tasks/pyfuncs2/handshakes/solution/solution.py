def handshakes(n):
    return n * (n - 1) // 2
