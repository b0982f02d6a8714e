def format_percent(x):
    return f"{x * 100:.1f}%"
