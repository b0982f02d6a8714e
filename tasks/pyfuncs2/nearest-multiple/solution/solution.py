def nearest_multiple(n, m):
    low = n // m * m
    return low if n - low < m - (n - low) else low + m
