def seconds_to_clock(n):
    return f"{n // 3600}:{n // 60 % 60:02d}:{n % 60:02d}"
